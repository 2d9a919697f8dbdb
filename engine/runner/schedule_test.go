package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/resources"
	"github.com/vzn/vx/proc"
)

// fakeExec answers each task's command as run, taking the duration and peak RSS the command names
// ("sleep 1000 rss 64": a 1 s task of 64 MiB) without running anything, and records the order in
// which tasks started.
type fakeExec struct {
	mu      sync.Mutex
	started []string
}

func (f *fakeExec) exec(_ context.Context, spec proc.Spec) (proc.Result, error) {
	var ms, rss int64
	fmt.Sscanf(spec.Shell, "sleep %d rss %d", &ms, &rss)
	f.mu.Lock()
	f.started = append(f.started, spec.Shell)
	f.mu.Unlock()
	return proc.Result{Wall: time.Duration(ms) * time.Millisecond, PeakRSSBytes: rss << 20}, nil
}

// skewedGraph has two short independent tasks listed first and a long chain a → b → c: in
// dependency order the short ones start first, by remaining path the chain does.
func skewedGraph(f *fixture) []string {
	p := f.project("p")
	f.task(p, "s1", "sleep 100 rss 1 s1", nil)
	f.task(p, "s2", "sleep 100 rss 1 s2", nil)
	f.task(p, "a", "sleep 100 rss 1 a", nil)
	f.task(p, "b", "sleep 1000 rss 1 b", func(t *graph.Task) { t.DependsOn = []string{"p#a"} })
	f.task(p, "c", "sleep 1000 rss 1 c", func(t *graph.Task) { t.DependsOn = []string{"p#b"} })
	return []string{"p#s1", "p#s2", "p#a", "p#b", "p#c"}
}

// Among ready tasks the one with the longest remaining path (from the p50s the first run
// recorded) starts first; the plan predicts that same schedule.
func TestCriticalPathFirst(t *testing.T) {
	f := newFixture(t)
	ids := skewedGraph(f)
	first := &fakeExec{}
	f.run(ids, func(o *Options) { o.Exec, o.Concurrency = first.exec, 1 })
	if got := commandsTail(first.started); got != "a b s1 s2 c" {
		t.Fatalf("first run (no history: every task counts as the median one, so the longer chain first) started %s, want a b s1 s2 c", got)
	}

	second := &fakeExec{}
	sum, _ := f.run(ids, func(o *Options) { o.Exec, o.Concurrency, o.Force = second.exec, 1, true })
	if got := commandsTail(second.started); got != "a b c s1 s2" {
		t.Errorf("second run started %s, want the chain first: a b c s1 s2", got)
	}
	for _, task := range sum.Tasks {
		if task.ReservedBytes != 1<<20 {
			t.Errorf("%s reserved %d, want its recorded peak", task.TaskID, task.ReservedBytes)
		}
	}

	opts := PlanOptions{Options: Options{Workspace: f.ws, TaskIDs: ids, Requested: ids, Concurrency: 2, Force: true,
		Getenv: func(string) string { return "" }}}
	plan, err := DryRun(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	// On 2 workers: a, then b beside s1 and s2, then c: 100 + 1000 + 1000.
	if plan.WallMs != 2100 || strings.Join(plan.CriticalPath, " ") != "p#a p#b p#c" || plan.WorkMs != 2300 {
		t.Errorf("plan wall %d work %d critical path %v, want 2100, 2300, p#a p#b p#c", plan.WallMs, plan.WorkMs, plan.CriticalPath)
	}
	if plan.Tasks[2].PriorityMs != 2100 || plan.Tasks[0].PriorityMs != 100 || plan.Tasks[0].ReserveBytes != 1<<20 {
		t.Errorf("plan tasks %+v", plan.Tasks)
	}
}

func commandsTail(cmds []string) string {
	var names []string
	for _, c := range cmds {
		f := strings.Fields(c)
		names = append(names, f[len(f)-1])
	}
	return strings.Join(names, " ")
}

// Tasks start while their reservations fit beside the running ones', whatever the free workers;
// one larger than the whole budget runs alone, once the others are done.
func TestSlotsMemory(t *testing.T) {
	const gib = 1 << 30
	mk := func(id string, reserve, priority int64) *node {
		return &node{task: &graph.Task{ID: id}, reserve: reserve, priority: priority}
	}
	s := &slots{workers: 8, budget: 3 * gib}
	for i := range 8 {
		n := mk(fmt.Sprint("t", i), gib, int64(100-i))
		s.push(n)
	}
	var running []*node
	for n := s.next(); n != nil; n = s.next() {
		running = append(running, n)
	}
	if len(running) != 3 || s.reserved != 3*gib {
		t.Fatalf("started %d tasks reserving %d, want 3 within 3 GiB", len(running), s.reserved)
	}
	// A small task passes the ones that do not fit; a huge one waits for an empty pool.
	s.done(running[0])
	big := mk("big", 5*gib, 1000)
	s.push(big)
	if n := s.next(); n != nil {
		t.Fatalf("started %s beside 2 running tasks, want the 5 GiB task to wait alone", n.task.ID)
	}
	s.done(running[1])
	s.done(running[2])
	if n := s.next(); n != big {
		t.Fatalf("started %v on an empty pool, want the 5 GiB task", n)
	}
	if n := s.next(); n != nil {
		t.Fatalf("started %s beside the task larger than the budget", n.task.ID)
	}
	s.done(big)
	small := mk("small", gib/2, 0)
	s.push(small)
	got := []string{}
	for n := s.next(); n != nil; n = s.next() {
		got = append(got, n.task.ID)
	}
	if !slices.Equal(got, []string{"t3", "t4", "t5"}) {
		t.Errorf("after the big task: started %v, want t3 t4 t5 by priority", got)
	}
	s.budget = 3*gib + gib/2
	if n := s.next(); n != small {
		t.Errorf("started %v, want the small task that fits where the next 1 GiB does not", n)
	}
}

// The first run reserves the default; the next reserves each task's recorded peak.
func TestReserveFromHistory(t *testing.T) {
	f := newFixture(t)
	p := f.project("p")
	f.task(p, "heavy", "sleep 10 rss 900 heavy", nil)
	f.task(p, "light", "sleep 10 rss 5 light", nil)
	ids := []string{"p#heavy", "p#light"}
	fe := &fakeExec{}
	sum, _ := f.run(ids, func(o *Options) { o.Exec = fe.exec })
	for _, r := range sum.Tasks {
		if r.ReservedBytes != resources.DefaultTaskMemory {
			t.Errorf("first run: %s reserved %d, want the default", r.TaskID, r.ReservedBytes)
		}
	}
	sum, _ = f.run(ids, func(o *Options) {
		o.Exec, o.Force, o.MemoryBudget, o.MemorySource = fe.exec, true, 1<<30, resources.MemoryFromFlag
	})
	want := map[string]int64{"p#heavy": 900 << 20, "p#light": 5 << 20}
	for _, r := range sum.Tasks {
		if r.ReservedBytes != want[r.TaskID] {
			t.Errorf("second run: %s reserved %d, want %d from history", r.TaskID, r.ReservedBytes, want[r.TaskID])
		}
	}
	if sum.Memory.BudgetBytes != 1<<30 || sum.Memory.Source != resources.MemoryFromFlag {
		t.Errorf("budget %d from %s", sum.Memory.BudgetBytes, sum.Memory.Source)
	}
}

// An interactive task starts only once the running tasks have ended, and nothing starts beside
// it; a persistent one is a server, which runs beside its dependents as any.
func TestInteractiveRunsAlone(t *testing.T) {
	mk := func(id string, interactive, persistent bool) *node {
		return &node{task: &graph.Task{ID: id, Interactive: interactive, Persistent: persistent}}
	}
	s := &slots{workers: 4}
	a, ask, b := mk("a", false, false), mk("ask", true, false), mk("b", false, false)
	a.priority, ask.priority, b.priority = 3, 2, 1
	s.push(a)
	s.push(ask)
	s.push(b)
	if n := s.next(); n != a {
		t.Fatalf("first started %v, want a", n)
	}
	if n := s.next(); n != nil {
		t.Fatalf("beside a started %s, want none: ask is next in line and waits for a to end", n.task.ID)
	}
	s.done(a)
	if n := s.next(); n != ask {
		t.Fatalf("once a ended, started %v, want ask", n)
	}
	if n := s.next(); n != nil {
		t.Fatalf("beside ask started %s, want none", n.task.ID)
	}
	s.done(ask)
	if n := s.next(); n != b {
		t.Fatalf("once ask ended, started %v, want b", n)
	}
	dev := mk("dev", true, true)
	s.push(dev)
	if n := s.next(); n != dev || s.alone {
		t.Fatalf("a persistent interactive task: started %v (alone %v), want dev beside b", n, s.alone)
	}
}
