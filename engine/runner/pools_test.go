package runner

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vzn/vx/engine/executor"
	"github.com/vzn/vx/engine/executor/remoteexec"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/proc"
)

// poolCounter counts the commands running at once in each pool: those a fake engine runs
// (remote) and those that run on this machine (local). A gate holds the remote ones until open
// says it may open; giveUp opens it anyway, so that a scheduler that never reaches the count
// ends the test with a failure rather than a hang.
type poolCounter struct {
	mu                    sync.Mutex
	remote, maxRemote     int
	local, maxLocal       int
	localsDone, remoteRan int
	open                  func(c *poolCounter) bool
	gate                  chan struct{}
	opened                bool
	// localHold is how long a local command holds its worker, so that commands that overrun the
	// pool overlap.
	localHold time.Duration
}

func newPoolCounter(t *testing.T, open func(c *poolCounter) bool) *poolCounter {
	c := &poolCounter{open: open, gate: make(chan struct{})}
	giveUp := time.AfterFunc(60*time.Second, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.openGate()
	})
	t.Cleanup(func() { giveUp.Stop() })
	return c
}

// openGate opens the gate once; c.mu is held.
func (c *poolCounter) openGate() {
	if !c.opened {
		c.opened = true
		close(c.gate)
	}
}

// check opens the gate when open says so; c.mu is held.
func (c *poolCounter) check() {
	if c.open(c) {
		c.openGate()
	}
}

// engine is a fake remote executor: each task waits at the gate, then passes (or answers err).
func (c *poolCounter) engine(err error) func(func(string, remoteexec.Update)) executor.Executor {
	return func(stages func(string, remoteexec.Update)) executor.Executor {
		return fakeRemote(func(ctx context.Context, t executor.Task) (executor.Result, error) {
			c.mu.Lock()
			c.remote++
			c.remoteRan++
			c.maxRemote = max(c.maxRemote, c.remote)
			c.check()
			c.mu.Unlock()
			defer func() {
				c.mu.Lock()
				c.remote--
				c.mu.Unlock()
			}()
			select {
			case <-c.gate:
			case <-ctx.Done():
				return executor.Result{ExitCode: -1, Cancelled: true, Log: t.Output.Log()}, nil
			}
			if err != nil {
				return executor.Result{ExitCode: -1}, err
			}
			if t.Started != nil {
				t.Started()
			}
			_, _ = t.Output.Write([]byte("ran remotely\n"))
			return executor.Result{Log: t.Output.Log()}, nil
		})
	}
}

// exec runs a local command, counted.
func (c *poolCounter) exec(ctx context.Context, spec proc.Spec) (proc.Result, error) {
	c.mu.Lock()
	c.local++
	c.maxLocal = max(c.maxLocal, c.local)
	c.mu.Unlock()
	if c.localHold > 0 {
		time.Sleep(c.localHold)
	}
	res, err := proc.Run(ctx, spec)
	c.mu.Lock()
	c.local--
	c.localsDone++
	c.check()
	c.mu.Unlock()
	return res, err
}

// fakeRemote is an executor.Executor made of a function.
type fakeRemote func(ctx context.Context, t executor.Task) (executor.Result, error)

func (f fakeRemote) Run(ctx context.Context, t executor.Task) (executor.Result, error) {
	return f(ctx, t)
}

// poolsFixture is a workspace of remotes packages whose build may run remotely and locals
// whose build may not (exec.remote: false), remote.capacity capacity.
func poolsFixture(t *testing.T, remotes, locals, capacity int) (*fixture, []string) {
	f := newFixture(t)
	var ids []string
	for i := range remotes + locals {
		name := fmt.Sprintf("p%02d", i)
		p := f.project(name)
		f.task(p, "build", "mkdir -p dist && cp src/a.txt dist/a.txt", func(gt *graph.Task) {
			gt.Inputs, gt.Outputs = []string{"src/**"}, []string{"dist/**"}
			if i >= remotes {
				no := false
				gt.RemoteExec = &no
			}
		})
		f.write("packages/"+name+"/src/a.txt", name+"\n")
		ids = append(ids, name+"#build")
	}
	f.ws.Remote = &graph.RemoteExec{Execute: true, Capacity: capacity}
	return f, ids
}

// TestRemotePoolTakesNoLocalWorker: with remote.capacity 32 and one local worker, 32 tasks run
// on the engine at once while the tasks that may not run remotely run on the local worker, one
// at a time, beside them.
func TestRemotePoolTakesNoLocalWorker(t *testing.T) {
	const remotes, locals, capacity = 40, 3, 32
	f, ids := poolsFixture(t, remotes, locals, capacity)
	c := newPoolCounter(t, func(c *poolCounter) bool { return c.remote == capacity && c.localsDone == locals })
	s, out := f.run(ids, func(o *Options) {
		o.Concurrency = 1
		o.remoteExecutor = c.engine(nil)
		o.Exec = c.exec
	})
	if !s.OK {
		t.Fatalf("run: %s\n%s", statuses(s), out)
	}
	if c.maxRemote != capacity || c.maxLocal != 1 || c.remoteRan != remotes || c.localsDone != locals {
		t.Fatalf("%d remote tasks at once (want %d), %d local (want 1); %d ran remotely, %d locally",
			c.maxRemote, capacity, c.maxLocal, c.remoteRan, c.localsDone)
	}
	if got := strings.Count(executors(s), "@remote"); got != remotes {
		t.Fatalf("%d tasks ran remotely, want %d: %s", got, remotes, executors(s))
	}
}

// TestRemoteFallbackTakesLocalWorker: remote tasks whose engine turns out unable to run them run
// locally, each taking a local worker first: with one worker, never two commands at once.
func TestRemoteFallbackTakesLocalWorker(t *testing.T) {
	const remotes = 6
	f, ids := poolsFixture(t, remotes, 0, 32)
	c := newPoolCounter(t, func(c *poolCounter) bool { return c.remote == remotes })
	c.localHold = 50 * time.Millisecond
	var notices []string
	s, out := f.run(ids, func(o *Options) {
		o.Concurrency = 1
		o.remoteExecutor = c.engine(fmt.Errorf("%w: no worker", executor.ErrRemoteUnavailable))
		o.Exec = c.exec
		o.Notice = func(m string) { notices = append(notices, m) }
	})
	if !s.OK {
		t.Fatalf("run: %s\n%s", statuses(s), out)
	}
	if c.maxRemote != remotes || c.localsDone != remotes || c.maxLocal != 1 {
		t.Fatalf("%d asked the engine at once (want %d); %d ran locally (want %d), %d at once (want 1)",
			c.maxRemote, remotes, c.localsDone, remotes, c.maxLocal)
	}
	if got := strings.Count(executors(s), "@local"); got != remotes || len(notices) != 1 {
		t.Fatalf("executors %s, notices %q", executors(s), notices)
	}
}

// TestSlotsTwoPools: remote tasks start longest path first up to the remote capacity, taking no
// local worker; a remote task that asks for a local worker takes the next one free before any
// ready local task, and gives its remote slot back.
func TestSlotsTwoPools(t *testing.T) {
	nodes := map[string]*node{}
	s := &slots{workers: 1, budget: 10, remoteCap: 2}
	for _, spec := range []struct {
		id       string
		priority int64
		remote   bool
	}{{"r1", 1, true}, {"r3", 3, true}, {"r2", 2, true}, {"l1", 1, false}, {"l5", 5, false}} {
		n := &node{task: &graph.Task{ID: spec.id}, priority: spec.priority, reserve: 1, remote: spec.remote, phase: running}
		nodes[spec.id] = n
		s.push(n)
	}
	start := func() string {
		var ids []string
		for n := s.next(); n != nil; n = s.next() {
			ids = append(ids, n.task.ID)
		}
		return strings.Join(ids, " ")
	}
	if got := start(); got != "r3 r2 l5" || s.running != 1 || s.remoteRunning != 2 || s.reserved != 1 {
		t.Fatalf("started %q, %d local, %d remote, %d reserved", got, s.running, s.remoteRunning, s.reserved)
	}
	// r2 is to run locally after all: it waits for l5's worker, and l1 waits behind it.
	s.ask(nodes["r2"])
	if n := s.nextGrant(); n != nil {
		t.Fatalf("granted %s while the one worker is busy", n.task.ID)
	}
	s.done(nodes["l5"])
	if n := s.nextGrant(); n != nodes["r2"] || s.running != 1 || s.remoteRunning != 1 {
		t.Fatalf("granted %v; %d local, %d remote", n, s.running, s.remoteRunning)
	}
	// Its remote slot went to r1; l1 waits for the worker r2 holds.
	if got := start(); got != "r1" {
		t.Fatalf("started %q after the grant, want r1", got)
	}
	s.done(nodes["r2"])
	if got := start(); got != "l1" || s.running != 1 || s.remoteRunning != 2 || s.reserved != 1 {
		t.Fatalf("started %q once r2 ended; %d local, %d remote, %d reserved", got, s.running, s.remoteRunning, s.reserved)
	}
}
