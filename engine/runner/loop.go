package runner

import (
	"context"
	"sort"
	"time"

	"github.com/sourcegraph/conc/pool"

	"github.com/vzn/vx/engine/counters"
	"github.com/vzn/vx/engine/store"
)

// scheduler runs one graph: it owns every task's phase (phase.go) and the workers, a conc pool
// whose goroutines each run one task and answer its outcome. Only the loop's goroutine changes
// its fields.
type scheduler struct {
	r     *runState
	ctx   context.Context
	nodes []*node
	slots *slots
	pool  *pool.Pool
	// results receives each started task's outcome, steps its phase changes before it; both are
	// buffered for every message a run can send, so that no worker ever blocks on the loop.
	results chan outcome
	steps   chan step
	// servers counts the persistent tasks started and not ended; ended the tasks ended.
	servers, ended int
	// stopping says that no task starts any more: the run was cancelled, or --bail met a failure.
	stopping bool

	batch     store.Batch
	rec       *recorder
	lastFlush time.Time
	// flushByRows says that the batch goes to the recorder only when full: in a counted run
	// (engine/counters), whose statements must not depend on how long its tasks took.
	flushByRows bool
}

// stepsPerTask bounds the steps one task's worker sends: lockWait, running, released, and a
// remote task's one request for a local worker.
const stepsPerTask = 4

// schedule runs the graph and answers every task's execution row, in dependency order. It owns the
// workers: it returns only after each has ended.
func (r *runState) schedule(ctx context.Context, nodes []*node) ([]store.Execution, error) {
	s := &scheduler{
		r: r, ctx: ctx, nodes: nodes,
		slots:   &slots{workers: r.opts.Concurrency, budget: r.opts.MemoryBudget, remoteCap: r.remoteCap},
		pool:    pool.New(),
		results: make(chan outcome, len(nodes)),
		steps:   make(chan step, stepsPerTask*len(nodes)),
		rec:     newRecorder(context.WithoutCancel(ctx), r.st),
	}
	defer s.rec.close() // a second close only waits for the first
	s.lastFlush = r.opts.Now()
	s.flushByRows = counters.From(ctx) != nil
	r.ahead = r.startAhead(ctx, nodes)
	defer r.ahead.stop() // after the workers, which may wait for a key it makes
	for _, n := range nodes {
		s.makeReady(n)
	}
	func() {
		// The workers end before anything else does, the loop's panic or not; theirs is
		// re-raised here.
		defer s.pool.Wait()
		s.loop()
	}()
	// Whatever never started was skipped: say what it still waited for.
	for _, n := range nodes {
		s.skip(n)
	}
	s.flush()
	recErr := s.rec.close()
	execs := make([]store.Execution, len(nodes))
	for i, n := range nodes {
		execs[i] = n.exec
	}
	sort.SliceStable(execs, func(i, j int) bool { return execs[i].Ord < execs[j].Ord })
	return execs, recErr
}

// loop starts what may start and applies what the workers answer, until every task has ended or
// nothing runs any more.
//
// The display holds the lines of what the loop handles without waiting (a burst of cache hits
// writes one block) and writes them before the loop waits.
func (s *scheduler) loop() {
	done := s.ctx.Done()
	display := s.r.display
	defer display.Flush()
	for s.ended < len(s.nodes) {
		s.startReady()
		s.stopIdleServers()
		if s.slots.busy()+s.servers == 0 {
			return
		}
		select {
		case <-done:
			s.stopping, done = true, nil
			continue
		case st := <-s.steps:
			s.moveTo(st)
			continue
		case o := <-s.results:
			s.finish(o)
			continue
		default:
		}
		display.Flush()
		select {
		case <-done:
			s.stopping, done = true, nil
		case st := <-s.steps:
			s.moveTo(st)
		case o := <-s.results:
			s.finish(o)
		}
		display.Hold()
	}
}

// startReady gives the local workers free to the remote tasks that ask for one, then starts
// every ready task the slots let start, unless the run is stopping. Once the run's engine is
// gone, the remote tasks not started yet wait for a local worker.
func (s *scheduler) startReady() {
	for n := s.slots.nextGrant(); n != nil; n = s.slots.nextGrant() {
		close(n.grant)
		n.grant = nil
	}
	if s.r.remoteGone.Load() {
		s.slots.demote()
	}
	for !s.stopping {
		n := s.slots.next()
		if n == nil {
			return
		}
		s.start(n)
	}
}

// stopIdleServers stops the servers started for dependents once nothing else can start: no worker
// is busy, no task is ready (or the run is stopping), and every server has released its
// dependents (or the run is stopping).
func (s *scheduler) stopIdleServers() {
	if s.servers == 0 || s.slots.busy() > 0 || (s.slots.queued() > 0 && !s.stopping) {
		return
	}
	for _, n := range s.nodes {
		if !s.stopping && n.stop != nil && (n.phase == running || n.phase == lockWait) {
			return
		}
	}
	for _, n := range s.nodes {
		if len(n.dependents) > 0 {
			s.stopServer(n)
		}
	}
}

// flushSome hands the batch to the recorder when it is full or old enough (full only in a counted
// run): a commit per task would cost more than a no-op task.
func (s *scheduler) flushSome() {
	old := !s.flushByRows && s.r.opts.Now().Sub(s.lastFlush) >= flushEvery
	if len(s.batch.Executions) >= flushRows || old {
		s.flush()
		s.lastFlush = s.r.opts.Now()
	}
}

// flush hands the batch to the recorder, which commits it beside the workers.
func (s *scheduler) flush() {
	s.batch.TouchedAt = s.r.opts.Now()
	s.rec.add(s.batch)
	s.batch = store.Batch{}
}
