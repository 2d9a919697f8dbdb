package runner

import (
	"context"
	"fmt"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/remote"
	"github.com/vzn/vx/engine/store"
)

// remoteSettings resolves the run's remote cache (the workspace's remoteCache, the environment, the
// --remote-cache flag). A setting that cannot work is one notice and no remote cache: the run goes
// on with the local cache.
func remoteSettings(opts Options) remote.Settings {
	s, err := remote.Resolve(opts.Workspace.RemoteCache, opts.Getenv, opts.RemoteCache)
	if err != nil {
		if opts.Notice != nil {
			opts.Notice(fmt.Sprintf("remote cache off: %v", err))
		}
		s.Mode = remote.ModeOff
	}
	return s
}

// lookup finds a task's key in the caches, local first, then remote, and restores the hit; ok is
// false for a miss. A remote hit comes through the same checked restore as a local one, and fills
// the local cache.
func (r *runState) lookup(ctx context.Context, p *graph.Project, t *graph.Task, key string) (entry store.Entry, source string, log []byte, ok bool) {
	// A point lookup is never worth interrupting, and a cancellable context costs a goroutine in
	// database/sql and another in the SQLite driver for every query.
	if entry, ok, err := r.st.Entry(context.WithoutCancel(ctx), key); err == nil && ok {
		if log, ok := r.restore(ctx, p, t, entry); ok {
			return entry, history.CacheSourceLocal, log, true
		}
	}
	if r.remote == nil || ctx.Err() != nil {
		return store.Entry{}, "", nil, false
	}
	m, ok := r.remote.Fetch(ctx, key)
	if !ok {
		return store.Entry{}, "", nil, false
	}
	entry = m.Entry(key, t, r.opts.Now())
	log, err := r.restoreRemote(ctx, p, t, entry)
	if err != nil {
		if ctx.Err() == nil {
			r.remote.Reject(fmt.Errorf("%s: %w", t.ID, err))
		}
		return store.Entry{}, "", nil, false
	}
	if err := r.st.PutEntry(context.WithoutCancel(ctx), entry); err != nil {
		r.display.notice(t.ID, fmt.Sprintf("vx: not cached locally: %v", err))
	}
	r.remote.Hit()
	return entry, history.CacheSourceRemote, log, true
}

// restoreRemote restores a fetched entry's outputs through extract, the checks of every hit: only
// the task's declared outputs, never through a symlink, sizes bounded, each file's hash checked.
func (r *runState) restoreRemote(ctx context.Context, p *graph.Project, t *graph.Task, e store.Entry) ([]byte, error) {
	log, err := r.st.CAS().GetBounded(e.LogBlob, e.Size)
	if err != nil {
		return nil, fmt.Errorf("log blob: %w", err)
	}
	blob := func() ([]byte, error) { return r.st.CAS().GetBounded(e.OutputsBlob, e.Size) }
	changed, err := extract(ctx, r.opts.Workspace, p, t, e.Outputs, blob, r.matches)
	if changed || err != nil {
		r.hasher.Invalidate(p.Dir)
	}
	if err != nil {
		return nil, err
	}
	return log, nil
}

// upload sends a new local entry to the remote cache, in the background.
func (r *runState) upload(e store.Entry, outputsSize, logSize int64) {
	if r.remote.Writes() {
		r.remote.Upload(e.Hash, remote.MetaOf(e, outputsSize, logSize))
	}
}
