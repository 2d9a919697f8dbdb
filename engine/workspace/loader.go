package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/vzn/vx/engine/config"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/mask"
	"github.com/vzn/vx/engine/vxerr"
)

// Loader evaluates a workspace's config and resolves it, keeping the result so that a later Load
// in the same process answers from memory when no config file, package.json or project folder
// changed. It is safe for concurrent use; the MCP server keeps one for its whole life, so an
// edited config is seen on the next call with no restart.
type Loader struct {
	opts Options
	mu   sync.Mutex
	last *loaded
}

// loaded is one resolved workspace and the stamps of everything it was built from.
type loaded struct {
	root   string
	ws     *graph.Workspace
	stamps map[string]stamp
}

// stamp is what a stat says of a file or folder; a change of any part means it changed.
type stamp struct {
	exists bool
	size   int64
	mtime  time.Time
	ino    uint64
	ctime  int64
}

func stampOf(path string) stamp {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}
	}
	s := stamp{exists: true, size: fi.Size(), mtime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ino = st.Ino
		s.ctime = st.Ctim.Nano()
	}
	return s
}

// NewLoader returns a Loader for the workspace found from opts.Dir.
func NewLoader(opts Options) *Loader { return &Loader{opts: opts} }

// Root returns the workspace root.
func (l *Loader) Root() (string, error) { return FindRoot(l.opts.Dir) }

// Load evaluates (or reuses) the config and returns the resolved workspace. The returned
// workspace is shared: callers must not change it.
func (l *Loader) Load(ctx context.Context) (*graph.Workspace, error) {
	root, err := FindRoot(l.opts.Dir)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last != nil && l.last.root == root && l.last.unchanged() {
		return l.last.ws, nil
	}
	b := &build{root: root, cacheDir: CacheDir(root, l.opts.getenv), getenv: l.opts.getenv}
	b.sess = config.NewSession(config.Options{
		Root: root, CacheDir: b.cacheDir, Console: l.opts.Console, Version: l.opts.Version,
	})
	ws, err := b.load(ctx)
	if err != nil {
		l.last = nil
		return nil, maskError(err, mask.New(b.secretValues()...))
	}
	watched := append(append([]string{filepath.Join(root, ConfigFileName)}, b.sess.Inputs()...), b.watched...)
	sort.Strings(watched)
	stamps := make(map[string]stamp, len(watched))
	for _, p := range watched {
		stamps[p] = stampOf(p)
	}
	l.last = &loaded{root: root, ws: ws, stamps: stamps}
	return ws, nil
}

// maskError masks secret values in a load error, keeping its kind.
func maskError(err error, m *mask.Masker) error {
	if m.Empty() {
		return err
	}
	var ce *vxerr.ConfigError
	if errors.As(err, &ce) {
		masked := *ce
		masked.Msg = m.String(ce.Msg)
		return &masked
	}
	var ue *vxerr.UsageError
	if errors.As(err, &ue) {
		return &vxerr.UsageError{Msg: m.String(ue.Msg)}
	}
	return errors.New(m.String(err.Error()))
}

// unchanged reports whether every watched file and folder stats as it did.
func (c *loaded) unchanged() bool {
	for p, s := range c.stamps {
		if stampOf(p) != s {
			return false
		}
	}
	return true
}
