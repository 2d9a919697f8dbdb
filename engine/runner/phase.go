package runner

import (
	"context"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/profilerec"
	"github.com/vzn/vx/engine/runout"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
)

// phase is where a task is in its run. The scheduler (loop.go) moves it, and only through the
// transitions below, each of which keeps one invariant:
//
//	waiting ─makeReady→ ready ─start→ running ─finish→ endHit, endMiss, endFailed, endTimedOut,
//	   │                  │            │   ↑           endCancelled, endSkipped
//	   │                  │     lockWait   running (the lock is taken)
//	   │                  │            ↓   │
//	   │                  │           lockWait ─finish→ endFailed (gave up at its timeout), endCancelled
//	   └──────────────────┴─block→ endBlocked, ─skip→ endSkipped (never started)
//
// A persistent task goes on from running: ─release→ released (its key is known, its dependents
// run beside it) ─stopServer→ stopping (everything it served has ended) ─finish→ a terminal
// phase. The terminal phases are one to one the summary's statuses (endStatuses).
type phase uint8

const (
	waiting  phase = iota // a task it depends on has not finished (or released it) yet
	ready                 // in the ready queue, waiting for a worker and memory
	running               // its worker keys it, looks it up, runs it
	lockWait              // its worker waits for another process that runs the same task
	released              // a persistent task whose command runs, its dependents beside it
	stopping              // a released persistent task vx has stopped: everything it served is done

	endHit       // restored from the cache
	endMiss      // ran and passed
	endFailed    // ran and failed, or could not start
	endBlocked   // not run: a task it depends on failed
	endSkipped   // not run: the run stopped first, or (persistent) it runs elsewhere
	endTimedOut  // killed when its timeout ran out
	endCancelled // killed when the run was cancelled
)

// endStatuses are the summary's statuses of the terminal phases, in the phases' order.
var endStatuses = [...]store.Status{store.StatusHit, store.StatusMiss, store.StatusFailed, store.StatusBlocked,
	store.StatusSkipped, store.StatusTimedOut, store.StatusCancelled}

// ended reports whether p is terminal: the task's execution row is made.
func (p phase) ended() bool { return p >= endHit }

// endOf is the terminal phase of a summary status.
func endOf(status store.Status) phase {
	for i, s := range endStatuses {
		if s == status {
			return endHit + phase(i)
		}
	}
	return endFailed
}

// node is one task of the run's graph.
type node struct {
	index      int // position in TaskIDs (dependency order)
	task       *graph.Task
	project    *graph.Project
	deps       []*node
	dependents []*node
	// pending counts the deps that have not released it yet: it is ready at 0.
	pending int
	// cost is the task's predicted duration (its p50, else the median task's), priority its
	// remaining path (prioritize); reserve the memory it reserves and reserveFrom from what.
	cost, priority int64
	reserve        int64
	reserveFrom    string

	phase phase
	key   string
	exec  store.Execution // its row, once ended
	// servedDependents says that its dependents were released (a hit, a miss, a persistent task
	// once its command started): once the task has ended, its phase no longer tells a server that
	// served them and then failed from one that never did.
	servedDependents bool
	// stop stops a persistent task's command; nil for the others.
	stop context.CancelFunc
	// timing is its attempt's timing, for a profile.
	timing taskTiming
	// remote says that it runs in the remote pool: it takes a remote slot and no local worker
	// (planned as it becomes ready, remotePlanned). local says that such a task has been given a
	// local worker too, to run locally after all; grant is closed when it is given one.
	remote, local bool
	grant         chan struct{}
	// ahead is its key made ahead of its start (ahead.go), nil when the run makes none.
	ahead *aheadKey
}

// step is a worker's report of its task's phase as it changes before its outcome: it waits for
// another process (lockWait, with holder naming that process), it goes on (running), or its
// command starts as a persistent task (released, with its key).
type step struct {
	n      *node
	to     phase
	key    string
	holder string
	// wait, on a step to lockWait, is the key the task waits for and who executes it (the key
	// lock); nil for a wait on the task lock (holder).
	wait *summary.WaitedFor
	// grant, on a step of a remote task that is to run locally after all, is closed when it
	// is given a local worker (its phase does not change).
	grant chan struct{}
}

// makeReady moves a waiting task whose deps have all released it to the ready queue of its pool.
func (s *scheduler) makeReady(n *node) {
	if n.phase != waiting || n.pending > 0 {
		return
	}
	n.phase = ready
	n.remote = s.r.remotePlanned(n.task)
	s.slots.push(n)
	s.r.ahead.ready(n)
}

// start moves a task the slots let start to running on a worker of the pool. A task that ended
// while it was queued (blocked by a server that failed after releasing it) gives its slot back.
// A remote task runs with a local worker to ask for (localWorker), should it run locally.
func (s *scheduler) start(n *node) {
	if n.phase != ready {
		s.slots.done(n)
		return
	}
	n.phase = running
	taskCtx := s.ctx
	if n.remote {
		taskCtx = withLocalWorker(taskCtx, &localWorker{n: n, steps: s.steps})
	}
	if n.task.Persistent {
		// A server takes no worker: it waits on its dependents, not the other way round.
		s.servers++
		taskCtx, n.stop = context.WithCancel(s.ctx)
	}
	depKeys := make(map[string]string, len(n.deps))
	for _, d := range n.deps {
		depKeys[d.task.ID] = d.key
	}
	s.r.display.Started(n.task.ID)
	report := func(st step) { s.steps <- st }
	s.pool.Go(func() {
		// Whatever happens to the worker, the loop hears of the task: a panic is re-raised at Wait.
		o := outcome{n: n, panicked: true}
		defer func() { s.results <- o }()
		o = s.r.execute(profilerec.WithTask(taskCtx, n.task.ID), n, depKeys, report)
		o.timing.ended = s.r.opts.Now()
	})
}

// moveTo applies a worker's step, if the task is still where the step leaves from: a step can
// be read after the task's outcome, and an ended task stays ended.
func (s *scheduler) moveTo(st step) {
	n := st.n
	switch {
	case st.grant != nil:
		n.grant = st.grant
		s.slots.ask(n)
	case st.to == lockWait && n.phase == running && st.wait != nil:
		n.phase = lockWait
		text := keyWaitText(st.wait)
		s.r.waits[n.task.ID] = st.wait
		s.r.display.WaitingFor(n.task.ID, text)
		s.r.event(runout.WaitEvent(n.task.ID, st.wait.Key, st.wait.PID, st.wait.Checkout, "waiting for "+text))
	case st.to == lockWait && n.phase == running:
		n.phase = lockWait
		s.r.display.Waiting(n.task.ID, st.holder)
	case st.to == running && n.phase == lockWait:
		n.phase = running
		s.r.display.Resumed(n.task.ID)
	case st.to == released && n.phase == running:
		n.phase = released
		n.key = st.key
		s.releaseDependents(n)
	}
}

// releaseDependents lets n's dependents start, once: each counts one dep fewer to wait for.
func (s *scheduler) releaseDependents(n *node) {
	if n.servedDependents {
		return
	}
	n.servedDependents = true
	for _, d := range n.dependents {
		d.pending--
		s.makeReady(d)
	}
}

// stopServer stops a persistent task's command: the task ends with its outcome, a pass when
// nothing else ended it.
func (s *scheduler) stopServer(n *node) {
	if n.stop == nil || (n.phase != running && n.phase != lockWait && n.phase != released) {
		return
	}
	n.phase = stopping
	n.stop()
}

// stopIfServed stops a persistent task once every dependent it was started for has ended.
func (s *scheduler) stopIfServed(d *node) {
	for _, x := range d.dependents {
		if !x.phase.ended() {
			return
		}
	}
	s.stopServer(d)
}

// finish ends a started task with its worker's outcome: its worker and memory are free again, and
// what it made is recorded.
func (s *scheduler) finish(o outcome) {
	n := o.n
	if o.panicked {
		o.exec = s.r.row(n, store.StatusFailed, nil)
		s.stopping = true
	}
	if n.task.Persistent {
		s.servers--
		n.stop()
		if n.phase == stopping && o.exec.Status == store.StatusCancelled && s.ctx.Err() == nil {
			// Stopped by vx after its dependents finished: it served them and passed.
			o.exec.Status = store.StatusMiss
		}
	}
	s.slots.done(n)
	if o.wrote {
		s.r.writes.add(writeDir(n.project, n.task)) // what it wrote is written
	}
	if n.key == "" {
		n.key = o.key
	}
	s.keep(o)
	o.exec.ReservedBytes = n.reserve
	o.exec.Waited = o.waited
	n.timing = o.timing
	s.end(n, o.exec)
	// A hit's log comes after its hit line, which says it was restored, not run again.
	s.r.display.Hit(n.task.ID, o.replay)
	switch n.phase {
	case endHit, endMiss:
		s.releaseDependents(n)
	case endCancelled:
	case endSkipped:
		if o.elsewhere {
			// A server already running in another process serves them from there.
			s.releaseDependents(n)
			break
		}
		fallthrough
	default:
		if s.r.opts.ContinueAlways && (n.phase == endFailed || n.phase == endTimedOut) {
			// --continue=always: its dependents run as if it had passed.
			s.releaseDependents(n)
			break
		}
		s.block(n, n.task.ID, n.exec.NotReady)
		if s.r.opts.Bail {
			s.stopping = true
		}
	}
	s.flushSome()
}

// keep adds what an outcome leaves for the index to the batch (its manifest, its hit's last use).
func (s *scheduler) keep(o outcome) {
	if o.manifest != nil && (o.exec.Status != store.StatusHit || o.exec.CacheSource != summary.CacheSourceLocal) {
		// A local hit's manifest was kept in this checkout's index when its entry was made; a
		// remote hit's entry was made on another machine, a shared one's by another checkout.
		s.batch.Manifests = append(s.batch.Manifests, store.ManifestRow{Hash: o.key, TaskID: o.n.task.ID, Manifest: o.manifest})
	}
	if o.touched != "" {
		s.batch.Touched = append(s.batch.Touched, o.touched)
	}
}

// end moves n to the terminal phase of its row e, once, and records it: the batch, the display,
// the events; the servers it depended on stop once they served everything.
func (s *scheduler) end(n *node, e store.Execution) {
	if n.phase.ended() {
		return
	}
	n.phase = endOf(e.Status)
	n.exec = e
	if e.OutputsRemote {
		s.r.keptRemote.Add(1)
	}
	s.ended++
	s.batch.Executions = append(s.batch.Executions, e)
	s.r.display.Finished(e)
	s.r.event(runout.TaskEvent(e, s.r.display.Done(), len(s.nodes)))
	s.traceTask(n, e)
	for _, d := range n.deps {
		if d.task.Persistent {
			s.stopIfServed(d)
		}
	}
}

// traceTask hands n's timing to the run's profile, if one is recorded: a task that never started
// is placed when its row was made.
func (s *scheduler) traceTask(n *node, e store.Execution) {
	from := n.timing.measuredFrom
	if from.IsZero() {
		from = e.Started
	}
	profilerec.RecordTask(s.ctx, profilerec.Task{ID: e.TaskID, Status: string(e.Status), CacheSource: e.CacheSource, Key: e.Hash,
		Start: n.timing.started, End: n.timing.ended, MeasuredFrom: from, Duration: e.Duration, ReservedBytes: e.ReservedBytes})
}

// block ends every task downstream of failed that has not started as blocked by root; notReady
// names root when it is a persistent task that never became ready (readyWhen), else nil.
func (s *scheduler) block(failed *node, root string, notReady []string) {
	for _, d := range failed.dependents {
		if d.phase != waiting && d.phase != ready {
			continue
		}
		s.end(d, s.r.row(d, store.StatusBlocked, func(e *store.Execution) { e.BlockedBy, e.NotReady = root, notReady }))
		s.block(d, root, notReady)
	}
}

// skip ends a task that never started as skipped, naming the deps it still waited for.
func (s *scheduler) skip(n *node) {
	if n.phase != waiting && n.phase != ready {
		return
	}
	var notReady []string
	for _, d := range n.deps {
		if !d.servedDependents {
			notReady = append(notReady, d.task.ID)
		}
	}
	s.end(n, s.r.row(n, store.StatusSkipped, func(e *store.Execution) { e.NotReady = notReady }))
}
