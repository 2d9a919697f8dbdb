package runner

import (
	"container/heap"
	"slices"
)

// prioritize sets each node's priority: its remaining path, the p50 of the task plus the longest
// chain of p50s of what waits on it. A task with no timed history counts as the median of the
// p50s known (1 ms when none is). Started longest-path first, the chain that bounds the run's
// wall time is never left waiting behind short tasks that could have run beside it.
func prioritize(nodes []*node, p50s map[string]int64) {
	var known []int64
	for _, n := range nodes {
		if p, ok := p50s[n.task.ID]; ok {
			known = append(known, p)
		}
	}
	median := int64(1)
	if len(known) > 0 {
		slices.Sort(known)
		median = known[len(known)/2]
	}
	for _, n := range nodes {
		n.cost = median
		if p, ok := p50s[n.task.ID]; ok {
			n.cost = p
		}
	}
	// Dependency order (index) reversed: every dependent's priority is known before its deps'.
	ordered := sortedByIndex(nodes)
	for i := len(ordered) - 1; i >= 0; i-- {
		n := ordered[i]
		var longest int64
		for _, d := range n.dependents {
			longest = max(longest, d.priority)
		}
		n.priority = n.cost + longest
	}
}

// readyQueue holds the tasks that may start, longest remaining path first, then in dependency
// order, so that runs start tasks predictably.
type readyQueue []*node

func (q readyQueue) Len() int { return len(q) }
func (q readyQueue) Less(i, j int) bool {
	if q[i].priority != q[j].priority {
		return q[i].priority > q[j].priority
	}
	return q[i].index < q[j].index
}
func (q readyQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *readyQueue) Push(x any)   { *q = append(*q, x.(*node)) }
func (q *readyQueue) Pop() any {
	old := *q
	n := old[len(old)-1]
	*q = old[:len(old)-1]
	return n
}

// slots decides which ready task starts next: the run (schedule) and its prediction (simulate)
// both go by it, so that the plan and the run agree. A task starts when a worker is free and its
// reservation fits beside those of the running tasks; a persistent task takes neither. When the
// first ready task does not fit, a later one that does may start in its place, except when the
// first is larger than the whole budget: then nothing passes it, and it runs alone once the
// running tasks have finished (rather than never).
//
// A task that runs remotely (node.remote) takes none of the local workers and no memory: it
// takes one of remoteCap remote slots, from a queue of its own in the same order. Should it run
// locally after all (the engine is gone, or its input root cannot be made), it asks for a local
// worker (grants) and moves to the local pool: such a task has started already, so it takes the
// next free worker before any ready task does.
type slots struct {
	workers int
	// budget is the memory budget in bytes; 0 holds no task back.
	budget   int64
	ready    readyQueue
	running  int
	reserved int64
	// alone says that an interactive task runs: nothing else starts until it ends.
	alone bool
	// remoteCap bounds the tasks running remotely at once (remoteRunning), which wait in
	// remoteReady; grants are the remote tasks waiting for a local worker.
	remoteCap     int
	remoteReady   readyQueue
	remoteRunning int
	grants        readyQueue
}

// push queues a ready task in its pool.
func (s *slots) push(n *node) {
	if n.remote {
		heap.Push(&s.remoteReady, n)
		return
	}
	heap.Push(&s.ready, n)
}

// busy counts the tasks that hold a worker or a remote slot.
func (s *slots) busy() int { return s.running + s.remoteRunning }

// queued counts the ready tasks of both pools.
func (s *slots) queued() int { return s.ready.Len() + s.remoteReady.Len() }

// next takes the ready task to start now out of its queue and counts it as running; nil when
// none may start.
func (s *slots) next() *node {
	if s.alone {
		return nil
	}
	if n := s.nextRemote(); n != nil {
		return n
	}
	if s.ready.Len() == 0 || s.grants.Len() > 0 {
		return nil
	}
	if s.ready[0].task.Persistent {
		return heap.Pop(&s.ready).(*node)
	}
	if s.running >= s.workers {
		return nil
	}
	var passed []*node
	defer func() {
		for _, n := range passed {
			heap.Push(&s.ready, n)
		}
	}()
	for s.ready.Len() > 0 {
		n := s.ready[0]
		if runsAlone(n) && s.running > 0 {
			if len(passed) == 0 {
				return nil // first in line: nothing passes it, it starts once the running end
			}
			passed = append(passed, heap.Pop(&s.ready).(*node))
			continue
		}
		if n.task.Persistent || s.fits(n) {
			heap.Pop(&s.ready)
			if !n.task.Persistent {
				s.running++
				s.reserved += n.reserve
			}
			s.alone = runsAlone(n)
			return n
		}
		if n.reserve > s.budget {
			return nil
		}
		passed = append(passed, heap.Pop(&s.ready).(*node))
	}
	return nil
}

func (s *slots) fits(n *node) bool {
	return s.budget <= 0 || s.running == 0 || s.reserved+n.reserve <= s.budget
}

// nextRemote takes the first remote task out of its queue when a remote slot is free.
func (s *slots) nextRemote() *node {
	if s.remoteReady.Len() == 0 || s.remoteRunning >= s.remoteCap {
		return nil
	}
	s.remoteRunning++
	return heap.Pop(&s.remoteReady).(*node)
}

// ask queues a running remote task's request for a local worker.
func (s *slots) ask(n *node) { heap.Push(&s.grants, n) }

// nextGrant takes the first remote task waiting for a local worker when a worker is free and
// its reservation fits, and moves it to the local pool (its remote slot freed); one that has
// ended meanwhile is dropped.
func (s *slots) nextGrant() *node {
	for s.grants.Len() > 0 && !s.alone {
		n := s.grants[0]
		if n.phase.ended() {
			heap.Pop(&s.grants)
			continue
		}
		if s.running >= s.workers || !s.fits(n) {
			return nil
		}
		heap.Pop(&s.grants)
		s.remoteRunning--
		s.running++
		s.reserved += n.reserve
		n.local = true
		return n
	}
	return nil
}

// demote moves the remote tasks not started yet to the local queue: nothing runs remotely any
// more.
func (s *slots) demote() {
	for s.remoteReady.Len() > 0 {
		n := heap.Pop(&s.remoteReady).(*node)
		n.remote = false
		heap.Push(&s.ready, n)
	}
}

// done returns a finished task's worker (or remote slot) and reservation.
func (s *slots) done(n *node) {
	if n.remote && !n.local {
		s.remoteRunning--
	}
	if !n.task.Persistent && (!n.remote || n.local) {
		s.running--
		s.reserved -= n.reserve
	}
	if runsAlone(n) {
		s.alone = false
	}
}

// runsAlone reports whether n is an interactive task that runs alone: it reads the terminal, so
// nothing else prints or starts beside it. A persistent one (a dev server that takes keys) runs
// beside what depends on it, as any server.
func runsAlone(n *node) bool { return n.task.Interactive && !n.task.Persistent }

// simulate runs the scheduler on a clock instead of processes: each task takes cost[n] (0 for a
// predicted hit; a persistent task releases its dependents at once). It answers the predicted
// wall time and the chain of tasks that ended last, each waiting on the one before it, first task
// first: the run's critical path as this schedule meets it.
func simulate(nodes []*node, cost map[*node]int64, workers int, budget int64) (int64, []string) {
	s := &slots{workers: workers, budget: budget}
	pending := make(map[*node]int, len(nodes))
	end := make(map[*node]int64, len(nodes))
	for _, n := range nodes {
		pending[n] = len(n.deps)
		if len(n.deps) == 0 {
			s.push(n)
		}
	}
	type job struct {
		n   *node
		end int64
	}
	var running []job
	var now int64
	var last *node
	for s.ready.Len() > 0 || len(running) > 0 {
		for n := s.next(); n != nil; n = s.next() {
			d := cost[n]
			if n.task.Persistent {
				d = 0
			}
			running = append(running, job{n, now + d})
		}
		if len(running) == 0 {
			break // cannot happen: a ready task always starts on an idle pool
		}
		i := 0
		for k, j := range running {
			if j.end < running[i].end || (j.end == running[i].end && j.n.index < running[i].n.index) {
				i = k
			}
		}
		j := running[i]
		running = append(running[:i], running[i+1:]...)
		now = j.end
		end[j.n] = j.end
		last = j.n
		s.done(j.n)
		for _, d := range j.n.dependents {
			if pending[d]--; pending[d] == 0 {
				s.push(d)
			}
		}
	}
	path := []string{}
	for n := last; n != nil; {
		path = append(path, n.task.ID)
		var prev *node
		for _, d := range n.deps {
			if prev == nil || end[d] > end[prev] {
				prev = d
			}
		}
		n = prev
	}
	slices.Reverse(path)
	return now, path
}
