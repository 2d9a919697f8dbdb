package runner

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sourcegraph/conc"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/profilerec"
)

// A run that reads a remote cache keys each task as it becomes ready, beside the workers, and
// asks the server for the key's entry at once (cache.FetchAhead): a worker that takes the task
// finds its key made and its entry fetched, or on its way, instead of spending its own time on
// the round trips. Where every task is a remote hit (a fresh clone in CI) the lookups overlap
// the restores instead of following them.
//
// A task is ready once every task it depends on has ended, so the key made then is the key its
// worker would make, unless something the key reads is written in between. The run's writeLog
// says what was: a key made ahead stands only where no restore, fetched output or command wrote
// in a folder of the task's project (or one holding it, or one it holds) since the key was begun,
// and, for a task whose inputs name files outside its project, nowhere at all; otherwise the
// worker makes the key again. (A command is taken to write in its own project, as the hasher
// takes it when it lists that project again.)

// aheadWorkers is how many tasks are keyed and looked up ahead at once: the lookups wait on the
// server, the keys on the disk.
const aheadWorkers = 4

// aheadLead bounds the tasks keyed ahead that no worker has taken yet, and with them the
// manifests held.
const aheadLead = 64

// aheadKey is the key made ahead of one task's start. The loop makes it as the task becomes
// ready; the first of a lookahead goroutine and the task's worker to claim it (state) makes the
// key: done is closed once a lookahead goroutine has.
type aheadKey struct {
	state   atomic.Int32
	done    chan struct{}
	depKeys map[string]string
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

// writeLog is the project folders the run wrote in, in order: a folder for each restore that
// changed files, each fetch of outputs that stayed remote, each command's start and end.
type writeLog struct {
	mu   sync.Mutex
	dirs []string
}

// add records a write in project folder dir.
func (w *writeLog) add(dir string) {
	w.mu.Lock()
	w.dirs = append(w.dirs, dir)
	w.mu.Unlock()
}

// mark answers the position of the next write.
func (w *writeLog) mark() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.dirs)
}

// untouched reports whether nothing was written, from position since on, in project folder dir,
// a folder holding it or a folder it holds; with anywhere, whether nothing was written at all.
func (w *writeLog) untouched(since int, dir string, anywhere bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if anywhere {
		return len(w.dirs) == since
	}
	for _, d := range w.dirs[since:] {
		if related(d, dir) {
			return false
		}
	}
	return true
}

// related reports whether project folders a and b are one, or one holds the other.
func related(a, b string) bool {
	return a == b || a == "." || b == "." || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

// keysAhead is a run's lookahead: the goroutines that key the ready tasks and fetch their remote
// entries. stop ends it, having waited for every goroutine it started.
type keysAhead struct {
	r      *runState
	ctx    context.Context
	cancel context.CancelFunc
	queue  chan *node
	lead   chan struct{}
	quit   chan struct{}
	wg     conc.WaitGroup
}

// startAhead starts the lookahead of a run of n tasks; nil where the run reads no remote cache,
// or was handed its keys.
func (r *runState) startAhead(ctx context.Context, n int) *keysAhead {
	if r.cache == nil || !r.readsCache() || !r.opts.Cache.RemoteRead() || !r.remoteCfg.Reads() || r.handed != nil {
		return nil
	}
	k := &keysAhead{r: r, queue: make(chan *node, n), lead: make(chan struct{}, aheadLead), quit: make(chan struct{})}
	k.ctx, k.cancel = context.WithCancel(ctx)
	for range aheadWorkers {
		k.wg.Go(k.work)
	}
	return k
}

// add queues ready task n to be keyed ahead, with its dependencies' keys; the loop calls it.
func (k *keysAhead) add(n *node) {
	if k == nil || n.task.IsGroup() || !n.task.Cache || n.task.Persistent {
		return
	}
	depKeys := make(map[string]string, len(n.deps))
	for _, d := range n.deps {
		depKeys[d.task.ID] = d.key
	}
	n.ahead = &aheadKey{done: make(chan struct{}), depKeys: depKeys}
	k.queue <- n
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

// work keys the queued tasks, one at a time, while the lead allows, and fetches each key's entry.
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
		if a.err == nil {
			k.r.cache.FetchAhead(ctx, n.task, a.made.key)
		}
	}
}

// take answers the key made ahead of task n's start (of project p), waiting for it while it is
// made; false when there is none, it failed, or something it read may have been written since
// (the worker makes the key itself). The worker calls it once.
func (k *keysAhead) take(ctx context.Context, n *node) (madeKey, bool) {
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
	if a.err != nil || !k.r.writes.untouched(a.since, n.project.Dir, a.made.inputs.Outside()) {
		return madeKey{}, false
	}
	return a.made, true
}

// wrote says that the run writes in project p: a key handed to the run no longer stands, nor one
// made ahead from p's files before now.
func (r *runState) wrote(p *graph.Project) {
	r.handed.wrote()
	r.writes.add(p.Dir)
}

// wrote is the run's wrote, for an attempt that writes in project p; the loop records the end of
// its writes when the attempt ends.
func (a *attempt) wrote(p *graph.Project) {
	a.r.wrote(p)
	a.o.wrote = true
}
