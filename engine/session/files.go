package session

import (
	"context"
	"errors"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/watch"
	"github.com/vzn/vx/engine/workspace"
)

// Watcher is a file watcher a session answers the workspace's file state from: the one
// StartWatcher starts (package watch's service, which also serves the socket CLI runs ask), or
// Options.Watcher.
type Watcher interface {
	// Update tells the watcher the workspace a call loaded, whose outputs it then hashes.
	Update(ws *graph.Workspace)
	// Snapshot answers the file state as the watcher vouches for it now.
	Snapshot(ctx context.Context) (*filestate.Snapshot, error)
	// WaitHashed waits until the watcher's first look is done and the files it left unhashed are
	// hashed: nil then, else why it never will or ctx's error.
	WaitHashed(ctx context.Context) error
	// Close stops the watcher.
	Close() error
}

// served is package watch's service as a Watcher.
type served struct{ *watch.Service }

func (s served) WaitHashed(ctx context.Context) error { return s.Watcher().WaitHashed(ctx) }

// files is the session's watcher: started once, it answers the in-process file state and the
// last workspace while none of its sources changed.
type files struct {
	mu     sync.Mutex
	w      Watcher
	closed bool
	// started is closed once StartWatcher has run (whether or not a watcher started), or close.
	started chan struct{}
	// loaded is the last workspace a load answered, snap the file state just before it, and
	// sources the folders of the files it was made from.
	loaded  *graph.Workspace
	snap    *filestate.Snapshot
	sources map[string]bool
}

// init makes f not yet started, or started with w.
func (f *files) init(w Watcher) {
	f.started = make(chan struct{})
	if w != nil {
		f.w = w
		close(f.started)
	}
}

// StartWatcher loads the workspace and starts watching it (the workspace's outputs and state
// folder as that load says, its root whether or not the config loads); a failure is said to log
// and leaves every call to scan. It starts nothing after Close, nor a second watcher.
func (s *Session) StartWatcher(ctx context.Context, log func(string)) {
	f := &s.files
	ws, _ := s.loader.Load(ctx)
	root, err := s.loader.Root()
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.markStarted()
	if err != nil || f.closed || f.w != nil {
		return
	}
	svc, err := watch.Serve(root, workspace.CacheDir(root, s.Getenv), ws, log)
	if err != nil {
		log(err.Error() + "; every run scans the workspace itself")
		return
	}
	f.w = served{svc}
}

// markStarted closes started, once; f.mu is held.
func (f *files) markStarted() {
	select {
	case <-f.started:
	default:
		close(f.started)
	}
}

// errNoWatcher is FilesReady's answer where no watcher started: every call scans.
var errNoWatcher = errors.New("no file watcher")

// FilesReady waits until Files answers the watcher's file state as it will stay until a file
// changes: nil once its first look is done and the files it left unhashed are hashed (a plan kept
// against an earlier snapshot would make the keys of every folder hashed since again), else why it
// never will (errNoWatcher, a limit too low) or ctx's error.
func (s *Session) FilesReady(ctx context.Context) error {
	f := &s.files
	select {
	case <-f.started:
	case <-ctx.Done():
		return ctx.Err()
	}
	w := f.watcher()
	if w == nil {
		return errNoWatcher
	}
	return w.WaitHashed(ctx)
}

func (f *files) watcher() Watcher {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.w
}

// Files answers the watcher's file state for a call on ws (whose outputs the watcher then
// hashes); nil, and the call scans, when there is no watcher or it cannot vouch for it.
func (s *Session) Files(ctx context.Context, ws *graph.Workspace) filestate.Source {
	w := s.files.watcher()
	if w == nil {
		return nil
	}
	w.Update(ws)
	snap, err := w.Snapshot(ctx)
	if err != nil {
		return nil
	}
	return snap
}

// Load answers the workspace for a call: the last one while the watcher saw no folder holding one
// of its sources change (the config, package.json files, project folders, what the config
// imports), else the loader's.
func (s *Session) Load(ctx context.Context) (*graph.Workspace, error) {
	f := &s.files
	f.mu.Lock()
	w, last, lastSnap, sources := f.w, f.loaded, f.snap, f.sources
	f.mu.Unlock()
	var snap *filestate.Snapshot
	if w != nil {
		snap, _ = w.Snapshot(ctx)
	}
	if snap != nil && last != nil && lastSnap != nil && !touchesAny(filestate.ChangedDirs(lastSnap, snap), sources) {
		return last, nil
	}
	ws, err := s.loader.Load(ctx)
	if err != nil || snap == nil {
		return ws, err
	}
	dirs, ok := sourceDirs(snap.Root(), s.loader.Sources())
	f.mu.Lock()
	if ok {
		f.loaded, f.snap, f.sources = ws, snap, dirs
	} else {
		f.loaded, f.snap, f.sources = nil, nil, nil
	}
	f.mu.Unlock()
	return ws, nil
}

func touchesAny(changed []string, dirs map[string]bool) bool {
	for _, c := range changed {
		if dirs[c] {
			return true
		}
	}
	return false
}

// sourceDirs answers the root-relative folders whose change may change a load made of sources:
// each source's own (a folder's stamp) and its parent's (a file's). ok is false when a source
// lies outside the root, where the watcher does not look.
func sourceDirs(root string, sources []string) (dirs map[string]bool, ok bool) {
	if len(sources) == 0 {
		return nil, false
	}
	dirs = map[string]bool{}
	for _, src := range sources {
		rel, err := filepath.Rel(root, src)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, false
		}
		rel = filepath.ToSlash(rel)
		dirs[rel] = true
		dirs[path.Dir(rel)] = true
	}
	return dirs, true
}

// close stops the watcher and its socket; a StartWatcher after it starts nothing.
func (f *files) close() {
	f.mu.Lock()
	w := f.w
	f.w, f.closed = nil, true
	f.markStarted()
	f.mu.Unlock()
	if w != nil {
		_ = w.Close()
	}
}
