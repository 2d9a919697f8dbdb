package runner

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/vzn/vx/engine/cache"
	"github.com/vzn/vx/engine/executor"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/store"
)

// downloadMode is what of the run's remote work comes back: Options.Download, else the
// workspace's remote.download, else all.
func (r *runState) downloadMode() string {
	if r.opts.Download != "" {
		return r.opts.Download
	}
	if ws := r.opts.Workspace; ws.Remote != nil && ws.Remote.Download != "" {
		return ws.Remote.Download
	}
	return graph.DownloadAll
}

// useDownloads readies the run's cache and executor for outputs that stay remote: in a run that
// executes remotely, the cache keeps remote the outputs of the tasks the download mode does not
// want (fetching them with the engine's CAS); in every run, a task that runs on this machine
// first gets the outputs of the tasks it depends on that stayed remote (localFetch).
func (r *runState) useDownloads(nodes []*node) {
	d := cache.Downloads{}
	if r.engine != nil {
		d.Fetcher = r.engine
	}
	if r.remoteOn {
		requested := map[string]bool{}
		for _, id := range r.opts.Requested {
			requested[id] = true
		}
		switch r.downloadMode() {
		case graph.DownloadMinimal:
			d.Wants = func(string) bool { return false }
		case graph.DownloadRequested:
			d.Wants = func(id string) bool { return requested[id] }
		}
	}
	r.cache.SetDownloads(d)
	byID := make(map[string]*node, len(nodes))
	for _, n := range nodes {
		byID[n.task.ID] = n
	}
	if ch, ok := r.executor.(*executor.Chooser); ok {
		ch.Local = &localFetch{local: ch.Local, r: r, byID: byID}
		return
	}
	r.executor = &localFetch{local: r.executor, r: r, byID: byID}
}

// localFetch runs a task on this machine once the outputs of the tasks it depends on (directly
// or not) that stayed remote are fetched and restored: a task never runs without
// them, and one whose upstream outputs cannot be fetched is refused, saying why.
type localFetch struct {
	local executor.Executor
	r     *runState
	byID  map[string]*node
	// mu makes one fetch at a time: two tasks of one upstream restore its outputs once.
	mu sync.Mutex
}

// Run fetches t's upstream outputs that stayed remote, then runs t on the local executor.
func (l *localFetch) Run(ctx context.Context, t executor.Task) (executor.Result, error) {
	if n, ok := l.byID[t.ID]; ok {
		if err := l.fetch(ctx, n); err != nil {
			return executor.Result{ExitCode: -1}, &executor.Refusal{Message: "vx: " + l.r.masker.String(err.Error()) + "\n"}
		}
	}
	return l.local.Run(ctx, t)
}

// fetch restores the outputs that stayed remote of the tasks n depends on: those whose row
// says so (each ended before n started, its row set by the loop). A run in which no task's
// outputs stayed remote looks at none: walking every upstream of every task, and asking the
// index about each, made a cold run of a deep graph quadratic (docs/performance.md, "G3 at full
// size").
func (l *localFetch) fetch(ctx context.Context, n *node) error {
	if l.r.keptRemote.Load() == 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range upstreams(n) {
		if d.key == "" || !d.task.Cache || d.task.Persistent || !d.exec.OutputsRemote {
			continue
		}
		if e, found, err := l.r.st.Entry(context.WithoutCancel(ctx), d.key); err != nil || !found || !e.OutputsRemote() {
			continue // its outputs were restored or made here, or it has no entry to fetch them by
		}
		if err := l.restore(ctx, d); err != nil {
			return fmt.Errorf("%s needs the outputs of %s, which stayed remote: %w", n.task.ID, d.task.ID, err)
		}
	}
	return nil
}

// restore fetches and restores upstream d's outputs under its task lock, as a run of d would
// write them: no other process restores or runs d meanwhile.
func (l *localFetch) restore(ctx context.Context, d *node) error {
	lk, err := l.r.locks.Lock(ctx, d.task.ID, nil)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	changed, err := l.r.cache.FetchOutputs(ctx, d.task, d.key)
	if changed {
		l.r.wrote(d.project, d.task)
		l.r.hasher.Wrote(d.project, d.task)
	}
	return err
}

// upstreams answers every task n depends on, directly or through others (a group standing for
// the tasks it depends on): what a local run would have left on disk before n, which n's command
// may read (a bundle of a package that imports another through node_modules).
func upstreams(n *node) []*node {
	var out []*node
	seen := map[*node]bool{}
	var walk func(n *node)
	walk = func(n *node) {
		for _, d := range n.deps {
			if seen[d] {
				continue
			}
			seen[d] = true
			if !d.task.IsGroup() {
				out = append(out, d)
			}
			walk(d)
		}
	}
	walk(n)
	return out
}

// keepsOutputsRemote reports whether a's task, run remotely, leaves its outputs in the engine's
// CAS: it is cached, the run writes the cache, and the download mode does not want them.
func (a *attempt) keepsOutputsRemote() bool {
	r := a.r
	return r.remoteOn && a.t.Cache && r.writesCache() && r.cache.KeepsRemote(a.t.ID)
}

// storeKept stores the entry of a remote command whose outputs stay in the engine's CAS: its
// listing and log, nothing written into the workspace; the row says that its outputs are remote.
// Outputs that cannot be kept fail the task, with the reason in its log.
func (a *attempt) storeKept(key string, log []byte) {
	r, t := a.r, a.t
	logBlob, err := r.cache.PutRemoteKept(a.ctx, t, key, log, a.e.Duration, a.remoteOutputs)
	if err != nil {
		msg := "vx: " + r.masker.String(err.Error())
		r.display.Replay(t.ID, []byte(msg+"\n"))
		a.e.Status = store.StatusFailed
		a.keepFailureLog(append(log, msg+"\n"...))
		return
	}
	a.e.LogBlob, a.e.LogSource = logBlob, "cache"
	a.e.OutputsRemote = true
}

// upstreamOutputs answers the outputs of every task a's task depends on (through their cache
// entries' listings) as a remote input root's grafted files, root-relative, by digest: a file of
// an entry whose outputs stayed remote is held by the engine, one of a whole entry is read from
// the workspace it was restored to or made in. ok is false when a dependency's outputs are not
// known here (no key, no entry): such a task runs locally.
func (a *attempt) upstreamOutputs() (grafted []executor.GraftedInput, ok bool) {
	if a.upstream == nil {
		g, ok := a.readUpstreamOutputs()
		a.upstream = &upstreamInputs{grafted: g, ok: ok}
	}
	return a.upstream.grafted, a.upstream.ok
}

// upstreamInputs is what upstreamOutputs answers, kept for the attempt's next question.
type upstreamInputs struct {
	grafted []executor.GraftedInput
	ok      bool
}

// readUpstreamOutputs reads upstreamOutputs' answer from the dependencies' cache entries.
func (a *attempt) readUpstreamOutputs() (grafted []executor.GraftedInput, ok bool) {
	visited := map[*node]bool{}
	var walk func(n *node) bool
	walk = func(n *node) bool {
		for _, d := range n.deps {
			if visited[d] {
				continue
			}
			visited[d] = true
			if d.key == "" {
				return false
			}
			e, found, err := a.r.st.Entry(context.WithoutCancel(a.ctx), d.key)
			if err != nil || !found {
				return false
			}
			remoteOnly := e.OutputsRemote()
			for _, o := range e.Outputs {
				rel := path.Join(d.project.Dir, o.Path)
				if root, ok := strings.CutPrefix(o.Path, "//"); ok {
					rel = root
				}
				g := executor.GraftedInput{RemoteOutput: executor.RemoteOutput{Path: rel, Hash: o.Hash, Size: o.Size,
					Executable: o.Mode&0o111 != 0 && o.Link == "", Link: o.Link}}
				if !remoteOnly && o.Link == "" {
					g.Source = filepath.Join(a.r.opts.Workspace.Root, filepath.FromSlash(rel))
				}
				grafted = append(grafted, g)
			}
			if !walk(d) {
				return false
			}
		}
		return true
	}
	if !walk(a.n) {
		return nil, false
	}
	return grafted, true
}
