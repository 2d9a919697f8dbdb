package runner

import (
	"context"
	"maps"
	"path"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sourcegraph/conc"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/profilerec"
)

// A run that reads a remote cache keys its tasks ahead of their start, beside the workers, and
// asks the server for each key's entry at once (cache.FetchAhead): a worker that takes a task
// finds its key made and its entry fetched, or on its way, instead of spending its own time on the
// round trips. Where every task is a remote hit (a fresh clone in CI) the lookups overlap the
// restores instead of following them, and a server further away costs little more.
//
// A task is keyed ahead as soon as every task it depends on has a key (made ahead, or by its
// worker): a key reads the dependencies' keys, not their outputs, and the task's own files, which
// a dependency's restore or command writes only where it shares a folder with the task (a task
// with such a dependency, a build before its project's test, waits until it is ready). A task is
// also keyed ahead when it becomes ready, with the dependencies' keys its worker will use. A key
// made ahead stands only where the worker's dependencies' keys are the ones it was made from, and
// nothing it read was written since it was begun: the run's writeLog holds the folders every
// restore, command (at its start and its end) and fetch of outputs wrote in, and a write in a
// folder of the task's project (or one holding it, or one it holds), or anywhere for a task whose
// inputs name files outside its project, makes the worker key the task again. (A task is taken to
// write in its own project, or anywhere where its outputs name paths outside it, as the hasher
// takes it when it lists projects again: writeDir.)
// A task whose key digests other projects' files as a whole (Through, DependencyFiles), which a
// run digests once, is keyed ahead only once ready, when those projects are done.

// aheadWorkers is how many tasks are keyed ahead at once, aheadFetches how many lookups are in
// flight: a key costs CPU and the disk, a lookup mostly waits on the server.
const (
	aheadWorkers = 2
	aheadFetches = 16
)

// aheadLead bounds the tasks keyed ahead that no worker has taken yet, and with them the
// manifests held.
const aheadLead = 1024

// aheadKey is the key made ahead of one task's start. The first of a lookahead goroutine and the
// task's worker to claim it (state) makes the key: done is closed once a lookahead goroutine has.
type aheadKey struct {
	state atomic.Int32
	done  chan struct{}
	// early says that the task may be keyed before it is ready, once its dependencies are keyed.
	early bool
	// queued, depKeys and pending are the lookahead's, under its mutex until the task is queued:
	// whether it is, the dependencies' keys it is to be made from, and how many are not known.
	queued  bool
	depKeys map[string]string
	pending int
	// reported says that the task's key was handed to its dependents (keysAhead.keyed).
	reported atomic.Bool
	// since is the writeLog's length when the key was begun; made and err what made it.
	since int
	made  madeKey
	err   error
}

// The states of an aheadKey.
const (
	aheadQueued int32 = iota // waiting for a lookahead goroutine
	aheadKeying              // a lookahead goroutine makes it; done is closed when it has
	aheadTaken               // the worker came first and makes its key itself
)

// madeKey is a task's key, the manifest it was made from and what the manifest saw of its inputs.
type madeKey struct {
	key    string
	data   []byte
	inputs *hasher.InputStats
}

// makeKey makes task t's key (of project p) from its files and its dependencies' keys; ahead
// says that the lookahead makes it, beside the task's worker.
func (r *runState) makeKey(ctx context.Context, p *graph.Project, t *graph.Task, depKeys map[string]string, ahead bool) (madeKey, error) {
	region := profilerec.Start(ctx, "hash")
	if ahead {
		region = profilerec.StartBackground(ctx, "hash ahead")
	}
	m, err := r.hasher.Manifest(ctx, p, t, depKeys)
	region.End()
	if err != nil {
		return madeKey{}, err
	}
	m.Sandbox = r.sandbox.Effective(t)
	key, data, err := m.Key()
	if err != nil {
		return madeKey{}, err
	}
	r.hasher.StatFolders(p, m.Inputs) // before the command: a file it adds moves one
	return madeKey{key: key, data: data, inputs: m.Inputs}, nil
}

// writeLog is the folders the run wrote in (writeDir): one write for each restore that changed
// files, each fetch of outputs that stayed remote, each command's start and end. It keeps, for
// each folder, the sequence number of the last write in it and of the last write in it or beneath
// it, so that a question costs a look-up per folder above the one asked about, however many
// writes the run made.
type writeLog struct {
	mu sync.Mutex
	// seq numbers the writes, from 1; last and lastUnder map a folder to the sequence number of
	// the last write in it, and in it or beneath it.
	seq             int
	last, lastUnder map[string]int
}

// add records a write in folder dir ("." the workspace's).
func (w *writeLog) add(dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last == nil {
		w.last, w.lastUnder = map[string]int{}, map[string]int{}
	}
	w.seq++
	dir = path.Clean(dir)
	w.last[dir] = w.seq
	for d := dir; ; d = path.Dir(d) {
		w.lastUnder[d] = w.seq
		if d == "." || d == "/" {
			break
		}
	}
}

// mark answers the position of the next write.
func (w *writeLog) mark() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seq
}

// untouched reports whether nothing was written, from position since on, in folder dir, a
// folder holding it or a folder it holds; with anywhere, whether nothing was written at all.
func (w *writeLog) untouched(since int, dir string, anywhere bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if anywhere || w.seq == since {
		return w.seq == since
	}
	dir = path.Clean(dir)
	if w.lastUnder[dir] > since {
		return false
	}
	for d := dir; d != "." && d != "/"; {
		d = path.Dir(d)
		if w.last[d] > since {
			return false
		}
	}
	return true
}

// related reports whether folders a and b are one, or one holds the other.
func related(a, b string) bool {
	a, b = path.Clean(a), path.Clean(b)
	return a == b || a == "." || b == "." || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

// keysAhead is a run's lookahead: the goroutines that key the tasks ahead and fetch their
// remote entries. stop ends it, having waited for every goroutine it started.
type keysAhead struct {
	r      *runState
	ctx    context.Context
	cancel context.CancelFunc
	queue  chan *node
	lead   chan struct{}
	quit   chan struct{}
	// fetches bounds the lookups in flight.
	fetches chan struct{}
	wg      conc.WaitGroup
	// mu guards the aheadKeys' queued, depKeys and pending.
	mu sync.Mutex
}

// startAhead starts the lookahead of a run of nodes, queueing those that depend on nothing; nil
// where the run reads no remote cache, or was handed its keys.
func (r *runState) startAhead(ctx context.Context, nodes []*node) *keysAhead {
	if r.cache == nil || !r.readsCache() || !r.opts.Cache.RemoteRead() || !r.remoteCfg.Reads() || r.handed != nil {
		return nil
	}
	k := &keysAhead{r: r, queue: make(chan *node, len(nodes)), lead: make(chan struct{}, aheadLead), quit: make(chan struct{}),
		fetches: make(chan struct{}, aheadFetches)}
	k.ctx, k.cancel = context.WithCancel(ctx)
	for _, n := range nodes {
		if aheadable(n.task) {
			n.ahead = &aheadKey{done: make(chan struct{}), depKeys: make(map[string]string, len(n.deps)), pending: len(n.deps),
				early: len(n.task.Through) == 0 && len(n.task.DependencyFiles) == 0}
		}
	}
	for _, n := range nodes {
		if n.ahead == nil {
			continue
		}
		for _, d := range n.deps {
			// A dependency that writes where the task's key reads would make a key made before
			// it ran or restored stand for nothing: such a task waits until it is ready.
			n.ahead.early = n.ahead.early && d.ahead != nil && !related(writeDir(d.project, d.task), n.project.Dir)
		}
		if n.ahead.early && n.ahead.pending == 0 {
			n.ahead.queued = true
			k.queue <- n
		}
	}
	for range aheadWorkers {
		k.wg.Go(k.work)
	}
	return k
}

// aheadable reports whether task t is keyed ahead: a cached task that is neither a group nor
// persistent.
func aheadable(t *graph.Task) bool { return !t.IsGroup() && t.Cache && !t.Persistent }

// ready queues task n, ready, with the keys of its dependencies, unless it is queued already;
// the loop calls it.
func (k *keysAhead) ready(n *node) {
	if k == nil || n.ahead == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if n.ahead.queued {
		return
	}
	for _, d := range n.deps {
		n.ahead.depKeys[d.task.ID] = d.key
	}
	n.ahead.queued = true
	k.queue <- n
}

// keyed hands task n's key, made ahead or by its worker, to its dependents: one whose every
// dependency has a key now is queued. Only the first key of a task is handed on.
func (k *keysAhead) keyed(n *node, key string) {
	if k == nil || n.ahead == nil || n.ahead.reported.Swap(true) {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, d := range n.dependents {
		a := d.ahead
		if a == nil || !a.early || a.queued {
			continue
		}
		a.depKeys[n.task.ID] = key
		if a.pending--; a.pending == 0 {
			a.queued = true
			k.queue <- d
		}
	}
}

// stop ends the lookahead, abandoning the keys and lookups in flight (no worker waits for them
// any more), and waits for its goroutines.
func (k *keysAhead) stop() {
	if k == nil {
		return
	}
	k.cancel()
	close(k.quit)
	k.wg.Wait()
}

// work keys the queued tasks, one at a time, while the lead allows, and starts the fetch of each
// key's entry.
func (k *keysAhead) work() {
	for {
		var n *node
		select {
		case <-k.quit:
			return
		case n = <-k.queue:
		}
		select {
		case <-k.quit:
			return
		case k.lead <- struct{}{}:
		}
		a := n.ahead
		if !a.state.CompareAndSwap(aheadQueued, aheadKeying) {
			<-k.lead // its worker keys it
			continue
		}
		ctx := profilerec.WithTask(k.ctx, n.task.ID)
		a.since = k.r.writes.mark()
		a.made, a.err = k.r.makeKey(ctx, n.project, n.task, a.depKeys, true)
		close(a.done)
		if a.err != nil {
			continue
		}
		k.keyed(n, a.made.key)
		select {
		case <-k.quit:
			return
		case k.fetches <- struct{}{}:
		}
		k.wg.Go(func() {
			defer func() { <-k.fetches }()
			k.r.cache.FetchAhead(ctx, n.task, a.made.key)
		})
	}
}

// take answers the key made ahead of task n's start, waiting for it while it is made; false when
// there is none, it failed, it was made from other dependencies' keys than depKeys (the worker's),
// or something it read may have been written since: the worker then makes the key itself. The
// worker calls it once.
func (k *keysAhead) take(ctx context.Context, n *node, depKeys map[string]string) (madeKey, bool) {
	a := n.ahead
	if k == nil || a == nil || a.state.CompareAndSwap(aheadQueued, aheadTaken) {
		return madeKey{}, false
	}
	select {
	case <-a.done:
	case <-ctx.Done():
		return madeKey{}, false
	}
	<-k.lead
	if a.err != nil || !maps.Equal(a.depKeys, depKeys) || !k.r.writes.untouched(a.since, n.project.Dir, a.made.inputs.Outside()) {
		return madeKey{}, false
	}
	return a.made, true
}

// wrote says that the run writes task t's outputs (in project p): a key handed to the run no
// longer stands, nor one made ahead from files where they lie before now.
func (r *runState) wrote(p *graph.Project, t *graph.Task) {
	r.handed.wrote()
	r.writes.add(writeDir(p, t))
}

// writeDir is the folder task t of project p writes in: its project's, or the workspace's where
// its outputs name a path outside its project ("//" globs).
func writeDir(p *graph.Project, t *graph.Task) string {
	if t.OutputsOutside() {
		return "."
	}
	return p.Dir
}

// wrote is the run's wrote, for the attempt's task; the loop records the end of its writes when
// the attempt ends.
func (a *attempt) wrote() {
	a.r.wrote(a.p, a.t)
	a.o.wrote = true
}
