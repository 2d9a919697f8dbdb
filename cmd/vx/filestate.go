package main

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/handoff"
	"github.com/vzn/vx/engine/watch"
	"github.com/vzn/vx/engine/workspace"
)

// fileStateWait is how long vx run waits for a watching vx's answer before it scans itself.
const fileStateWait = 10 * time.Millisecond

// fileStateAsk is a question to the watching vx under way: the root and state folder it asked
// for, and its answer once done; or the hand-off vx mcp gave a runTasks child, read.
type fileStateAsk struct {
	root, stateDir string
	done           chan struct{}
	answer         filestate.Source
	handoff        *handoff.Handoff
}

// startFileState asks, beside the config's load (the root and the state folder need none), the
// vx that watches this workspace for its file state, or reads the hand-off vx mcp wrote to
// handoffFrom (non-nil for its runTasks child: then it asks only should that not be taken); nil
// when there is no workspace to ask for.
func (a *app) startFileState(ctx context.Context, handoffFrom io.Reader) *fileStateAsk {
	root, err := workspace.FindRoot(a.workDir())
	if err != nil {
		return nil
	}
	q := &fileStateAsk{root: root, stateDir: workspace.CacheDir(root, a.getenv), done: make(chan struct{})}
	go func() {
		defer close(q.done)
		if handoffFrom != nil {
			if h := a.readHandoff(ctx, handoffFrom, q.root, q.stateDir); h != nil {
				q.answer, q.handoff = h.Files, h
				if h.Files == nil {
					// Every task a hit in place: the file state is asked for only should the run need it.
					q.answer = a.lazyFileState(ctx, q.root, q.stateDir)
				}
				return
			}
		}
		q.answer = a.askFileState(ctx, &graph.Workspace{Root: q.root, CacheDir: q.stateDir})
	}()
	return q
}

// of answers the file state for ws: the answer asked for its root and state folder, else nil
// (the run scans). It waits for the question, and may be called again.
func (q *fileStateAsk) of(ws *graph.Workspace) filestate.Source {
	if q == nil {
		return nil
	}
	<-q.done
	if ws == nil || ws.Root != q.root || ws.CacheDir != q.stateDir {
		return nil
	}
	return q.answer
}

// lazyFileState answers the file state of a runTasks child handed none: the watcher's, asked
// the first time the run needs one, or the disk's should none answer.
func (a *app) lazyFileState(ctx context.Context, root, stateDir string) filestate.Source {
	return &lazyFiles{get: sync.OnceValue(func() filestate.Source {
		a.log.Debug().Msg("file state: asked for after all")
		if files := a.askFileState(ctx, &graph.Workspace{Root: root, CacheDir: stateDir}); files != nil {
			return files
		}
		return filestate.NewScan(root, stateDir)
	})}
}

// lazyFiles is a file state made on its first question.
type lazyFiles struct {
	get func() filestate.Source
}

// Visible answers the visible files under dir from the file state.
func (l *lazyFiles) Visible(ctx context.Context, dir string) ([]string, error) {
	return l.get().Visible(ctx, dir)
}

// Lstat answers a path's lstat from the file state.
func (l *lazyFiles) Lstat(rel string) (fs.FileInfo, error) { return l.get().Lstat(rel) }

// WalkFiles walks the files under base from the file state.
func (l *lazyFiles) WalkFiles(base string, fn func(rel string, mode fs.FileMode)) error {
	return l.get().WalkFiles(base, fn)
}

// askFileState asks the vx that watches this workspace (vx mcp, vx watch), if one does, for the
// file state, so that the run stats no file; nil, and the run scans, when none answers in time,
// VX_FILE_STATE=scan says so, or on any doubt (which --log-level debug names).
func (a *app) askFileState(ctx context.Context, ws *graph.Workspace) filestate.Source {
	if a.getenv("VX_FILE_STATE") == "scan" {
		return nil
	}
	wait := fileStateWait
	if d, err := time.ParseDuration(a.getenv("VX_FILE_STATE_WAIT")); err == nil && d > 0 {
		wait = d
	}
	snap, err := filestate.Ask(ctx, ws.CacheDir, ws.Root, wait)
	if err == nil {
		// The answer is another process's: it is taken only where the disk agrees with it.
		err = snap.Verify(ctx)
	}
	if err != nil {
		if !errors.Is(err, filestate.ErrNoServer) {
			a.log.Debug().Err(err).Msg("file state: scanning")
		}
		return nil
	}
	a.log.Debug().Int("folders", snap.Dirs()).Msg("file state: from the watcher")
	return snap
}

// watchedFiles is the file watcher of a long-lived vx (vx mcp, vx watch): started once, it
// answers the in-process file state and serves the socket that CLI runs ask.
type watchedFiles struct {
	mu     sync.Mutex
	svc    *watch.Service
	closed bool
	// started is closed once start has run (whether or not a watcher started) or close did.
	started chan struct{}
	// loaded is the last workspace a load answered, snap the file state just before it, and
	// sources the folders of the files it was made from.
	loaded  *graph.Workspace
	snap    *filestate.Snapshot
	sources map[string]bool
}

// start starts watching the workspace the loader finds; a failure is said on log and leaves
// every run to scan.
func (f *watchedFiles) start(loader *workspace.Loader, getenv func(string) string, ws *graph.Workspace, log func(string)) {
	root, err := loader.Root()
	if err != nil {
		f.mu.Lock()
		f.markStarted()
		f.mu.Unlock()
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.markStarted()
	if f.closed || f.svc != nil {
		return
	}
	svc, err := watch.Serve(root, workspace.CacheDir(root, getenv), ws, log)
	if err != nil {
		log(err.Error() + "; every run scans the workspace itself")
		return
	}
	f.svc = svc
}

// newWatchedFiles answers the file watcher of a long-lived vx, not yet started.
func newWatchedFiles() *watchedFiles {
	return &watchedFiles{started: make(chan struct{})}
}

// markStarted closes started, once; f.mu is held.
func (f *watchedFiles) markStarted() {
	select {
	case <-f.started:
	default:
		close(f.started)
	}
}

// errNoWatcher is ready's answer where no watcher started: every call scans.
var errNoWatcher = errors.New("no file watcher")

// ready waits until source answers the watcher's file state as it will stay until a file
// changes: nil once its first look is done and the files it left unhashed are hashed (a plan
// kept against an earlier snapshot would make the keys of every folder hashed since again), else
// why it never will (no watcher started, a limit too low) or ctx's error.
func (f *watchedFiles) ready(ctx context.Context) error {
	select {
	case <-f.started:
	case <-ctx.Done():
		return ctx.Err()
	}
	f.mu.Lock()
	svc := f.svc
	f.mu.Unlock()
	if svc == nil {
		return errNoWatcher
	}
	return svc.Watcher().WaitHashed(ctx)
}

// source answers the watcher's file state for a call on ws (whose outputs the watcher then
// hashes); nil, and the call scans, when there is no watcher or it cannot vouch for it.
func (f *watchedFiles) source(ctx context.Context, ws *graph.Workspace) filestate.Source {
	f.mu.Lock()
	svc := f.svc
	f.mu.Unlock()
	if svc == nil {
		return nil
	}
	svc.Update(ws)
	snap, err := svc.Snapshot(ctx)
	if err != nil {
		return nil
	}
	return snap
}

// loader answers the load of a call: the last workspace while the watcher saw no folder holding
// one of its sources change (the config, package.json files, project folders, what the config
// imports), else the loader's.
func (f *watchedFiles) loader(l *workspace.Loader) func(ctx context.Context) (*graph.Workspace, error) {
	return func(ctx context.Context) (*graph.Workspace, error) {
		f.mu.Lock()
		svc, last, lastSnap, sources := f.svc, f.loaded, f.snap, f.sources
		f.mu.Unlock()
		var snap *filestate.Snapshot
		if svc != nil {
			snap, _ = svc.Snapshot(ctx)
		}
		if snap != nil && last != nil && lastSnap != nil && !touchesAny(filestate.ChangedDirs(lastSnap, snap), sources) {
			return last, nil
		}
		ws, err := l.Load(ctx)
		if err != nil || snap == nil {
			return ws, err
		}
		dirs, ok := sourceDirs(snap.Root(), l.Sources())
		f.mu.Lock()
		if ok {
			f.loaded, f.snap, f.sources = ws, snap, dirs
		} else {
			f.loaded, f.snap, f.sources = nil, nil, nil
		}
		f.mu.Unlock()
		return ws, nil
	}
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

// close stops the watcher and its socket; a start after it starts nothing.
func (f *watchedFiles) close() {
	f.mu.Lock()
	svc := f.svc
	f.svc, f.closed = nil, true
	f.markStarted()
	f.mu.Unlock()
	if svc != nil {
		_ = svc.Close()
	}
}
