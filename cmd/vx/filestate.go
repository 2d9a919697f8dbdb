package main

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/handoff"
	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/store"
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
	// early is what the run, which scans since no watcher answered, asked git meanwhile; nil
	// where a watcher or a hand-off answered, or the caller wanted none.
	early *hasher.Early
}

// startFileState asks, beside the config's load (the root and the state folder need none), the
// vx that watches this workspace for its file state, or reads the hand-off vx mcp wrote to
// handoffFrom (non-nil for its runTasks child: then it asks only should that not be taken); nil
// when there is no workspace to ask for. With early, a run that finds no watcher starts asking
// git what its hasher asks first (hasher.StartEarly).
func (a *app) startFileState(ctx context.Context, handoffFrom io.Reader, early bool) *fileStateAsk {
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
		if q.answer == nil && early {
			// A checkout without an index yet (a fresh clone) has no stat cache either: each
			// input's key comes from git's index, which is read now too.
			_, err := os.Stat(filepath.Join(q.stateDir, store.IndexFile))
			q.early = hasher.StartEarly(ctx, q.root, q.stateDir, errors.Is(err, fs.ErrNotExist))
		}
	}()
	return q
}

// earlyFor answers what the run asked git while its config loaded, for ws: nil where ws is another
// workspace or state folder than the one asked about. It waits for the question.
func (q *fileStateAsk) earlyFor(ws *graph.Workspace) *hasher.Early {
	if q == nil {
		return nil
	}
	<-q.done
	if ws == nil || ws.Root != q.root || ws.CacheDir != q.stateDir {
		return nil
	}
	return q.early
}

// close waits for the question, and for what was asked of git meanwhile.
func (q *fileStateAsk) close() {
	if q == nil {
		return
	}
	<-q.done
	q.early.Wait()
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
