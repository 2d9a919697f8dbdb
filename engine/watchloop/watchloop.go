// Package watchloop is vx watch: it runs a selection, then, each time the files git shows change
// (debounced), runs again the selected tasks whose keys moved, in dependency order, through the
// runner vx run uses (cache, history, sandbox, memory budget). An edit during a run that moves a
// task of it stops that run and starts again; files created since the run started (a build
// tool's temporary files beside its sources) move no key until it ended, and then only if they
// are still there; a task whose inputs changed while its command ran runs again, whatever its
// key says. A persistent task starts once and keeps running,
// restarted when its own key moves only if it says interruptible: true. An edited config is
// loaded again before the next run.
package watchloop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/planmemo"
	"github.com/vzn/vx/engine/runner"
	"github.com/vzn/vx/engine/runrequest"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
	"github.com/vzn/vx/engine/watch"
	"github.com/vzn/vx/engine/workspace"
)

// Options configure a watch.
type Options struct {
	// Loader loads the workspace, and again when its config changed.
	Loader *workspace.Loader
	// Request is the selection and its settings, as vx run's flags make them.
	Request runrequest.Request
	// Service is the workspace's file watcher.
	Service *watch.Service
	// Configure completes each run's options as vx run does (how it is shown, supervised,
	// sandboxed); nil leaves them as runrequest.Prepare made them.
	Configure func(*runner.Options)
	// Report receives each run's summary; nil drops it.
	Report func(*summary.Summary)
	// Status receives the live line: what is watched, what an edit started, what it re-ran.
	Status func(line string)
	// Debounce is how long the files must stay quiet before a run; 0 means 100 ms.
	Debounce time.Duration
	// Run runs a selection; nil means runner.Run.
	Run func(ctx context.Context, opts runner.Options) (*summary.Summary, error)
}

// DefaultDebounce is how long the files must stay quiet before vx watch runs.
const DefaultDebounce = 100 * time.Millisecond

// Watch runs until ctx is cancelled (Ctrl-C), then stops every run it started, as vx run stops
// its tasks, and returns nil. It returns an error only when the first selection cannot be made.
func Watch(ctx context.Context, opts Options) error {
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.Run == nil {
		opts.Run = runner.Run
	}
	if opts.Status == nil {
		opts.Status = func(string) {}
	}
	l := &loop{opts: opts, lastKeys: map[string]string{}, movedAt: map[string]string{}, writesOwn: map[string][]string{},
		servers: map[string]*server{}, memo: planmemo.NewMemo(),
		cycleDone: make(chan cycleResult, 1), serverDone: make(chan serverResult, 8)}
	if err := l.reload(ctx); err != nil {
		return err
	}
	defer l.memo.Close()
	defer l.stopAll()
	signal, take, cancel := opts.Service.Watcher().Subscribe()
	defer cancel()
	l.startCycle(ctx, l.eligible(), "first run")
	var quiet <-chan time.Time
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-signal:
			timer.Reset(opts.Debounce)
			quiet = timer.C
		case <-quiet:
			quiet = nil
			l.changed(ctx, take())
		case res := <-l.cycleDone:
			l.finished(ctx, res)
		case res := <-l.serverDone:
			l.serverEnded(res)
		}
	}
}

// loop is one watch's state, touched only by Watch's goroutine.
type loop struct {
	opts Options
	ws   *graph.Workspace
	plan runner.PlanOptions
	// order is every selected task in dependency order; persistent the persistent ones, and
	// beside those that depend on one (run with it, never re-run on their own).
	order      []string
	persistent map[string]bool
	beside     map[string]bool
	// lastKeys is each task's key when it last finished (its plan's key).
	lastKeys map[string]string
	// movedAt holds, for each task whose last run saw its inputs move while it ran, the key that
	// run used: a repeat at that key that sees them move again is the task's own doing. writesOwn
	// holds, for each task found so, the inputs it writes itself.
	movedAt   map[string]string
	writesOwn map[string][]string
	// current is the run in progress, nil when none; again is set when an edit came during it.
	current *cycle
	again   bool
	againOn string
	// started says that the first run finished and the persistent tasks were started.
	started    bool
	servers    map[string]*server
	cycleDone  chan cycleResult
	serverDone chan serverResult
	wg         sync.WaitGroup
	runs       int
	// memo keeps the last plan's keys for the next.
	memo *planmemo.Memo
}

// reload loads the workspace and selects the tasks again.
func (l *loop) reload(ctx context.Context) error {
	ws, err := l.opts.Loader.Load(ctx)
	if err != nil {
		return err
	}
	plan, err := runrequest.Prepare(ctx, ws, l.opts.Request)
	if err != nil {
		return err
	}
	l.ws, l.plan, l.order = ws, plan, plan.TaskIDs
	l.persistent, l.beside = map[string]bool{}, map[string]bool{}
	for _, id := range l.order {
		if t, ok := ws.Task(id); ok && t.Persistent {
			l.persistent[id] = true
		}
	}
	for _, id := range l.order {
		if !l.persistent[id] && l.dependsOnPersistent(id, map[string]bool{}) {
			l.beside[id] = true
		}
	}
	l.opts.Service.Update(ws)
	return nil
}

func (l *loop) dependsOnPersistent(id string, seen map[string]bool) bool {
	if seen[id] {
		return false
	}
	seen[id] = true
	t, ok := l.ws.Task(id)
	if !ok {
		return false
	}
	for _, d := range t.DependsOn {
		if l.persistent[d] || l.dependsOnPersistent(d, seen) {
			return true
		}
	}
	return false
}

// eligible answers the tasks watch re-runs itself: every selected one but the persistent tasks
// and what depends on them.
func (l *loop) eligible() []string {
	var out []string
	for _, id := range l.order {
		if !l.persistent[id] && !l.beside[id] {
			out = append(out, id)
		}
	}
	return out
}

// closure answers ids with every task they depend on, in the selection's dependency order.
func (l *loop) closure(ids []string) []string {
	want := map[string]bool{}
	var add func(id string)
	add = func(id string) {
		if want[id] {
			return
		}
		want[id] = true
		if t, ok := l.ws.Task(id); ok {
			for _, d := range t.DependsOn {
				add(d)
			}
		}
	}
	for _, id := range ids {
		add(id)
	}
	var out []string
	for _, id := range l.order {
		if want[id] {
			out = append(out, id)
		}
	}
	return out
}

// files answers the watcher's file state, nil (a scan) when it cannot vouch for one.
func (l *loop) files(ctx context.Context) filestate.Source {
	snap, err := l.opts.Service.Snapshot(ctx)
	if err != nil {
		return nil
	}
	return snap
}

// keys answers every selected task's key as the files are now (a plan: nothing run).
func (l *loop) keys(ctx context.Context) (map[string]string, error) {
	return l.keysOver(ctx, l.files(ctx), l.memo)
}

// keysDuring answers the keys as the files are now but for those created since run c started:
// what its tasks create and remove during their run never moves a key (see withoutCreated).
// Without the run's or the present file state it answers keys: every file counts.
func (l *loop) keysDuring(ctx context.Context, c *cycle) (map[string]string, error) {
	now := l.files(ctx)
	if now == nil || c.start == nil {
		return l.keys(ctx)
	}
	// The memo keeps a watcher's snapshots' keys; this state is none.
	return l.keysOver(ctx, withoutCreated{now: now, start: c.start}, nil)
}

// keysOver answers every selected task's key over files (nil scans), through memo (nil: none).
func (l *loop) keysOver(ctx context.Context, files filestate.Source, memo *planmemo.Memo) (map[string]string, error) {
	po := l.plan
	po.Files, po.Memo = files, memo
	plan, err := runner.DryRun(ctx, po)
	if err != nil {
		return nil, err
	}
	keys := make(map[string]string, len(plan.Tasks))
	for _, t := range plan.Tasks {
		keys[t.TaskID] = t.Hash
	}
	return keys, nil
}

// moved answers the eligible tasks whose key differs from the one they last finished with.
func (l *loop) moved(keys map[string]string) []string {
	var out []string
	for _, id := range l.eligible() {
		if k, ok := l.lastKeys[id]; !ok || k != keys[id] {
			out = append(out, id)
		}
	}
	return out
}

// changed answers a settled edit: the config loaded again where it changed, the keys planned,
// and what moved run (now, or after the run in progress, which it stops when it moves a task of
// it).
func (l *loop) changed(ctx context.Context, c watch.Change) {
	what := describe(c, l.exists(ctx))
	if ws, err := l.opts.Loader.Load(ctx); err != nil {
		l.opts.Status(fmt.Sprintf("%s: the config does not load: %v; watching", what, err))
		return
	} else if ws != l.ws {
		if err := l.reload(ctx); err != nil {
			l.opts.Status(fmt.Sprintf("%s: %v; watching", what, err))
			return
		}
		what += ": config loaded again"
	}
	if cur := l.current; cur != nil {
		l.changedDuring(ctx, cur, what)
		return
	}
	keys, err := l.keys(ctx)
	if err != nil {
		l.opts.Status(fmt.Sprintf("%s: %v; watching", what, err))
		return
	}
	moved := l.moved(keys)
	if len(moved) == 0 {
		// Only a persistent task's own inputs may have moved: after a run, its rebuilt
		// dependencies are in its key too, so it is looked at then.
		if !l.restartServers(ctx, keys) {
			l.opts.Status(what + ": no task's key moved; watching")
		}
		return
	}
	l.startCycleWith(ctx, moved, keys, what)
}

// changedDuring answers an edit settled during run cur: it stops cur when the key of a task of it
// differs from the key cur runs it with, files cur's tasks created since it started left out;
// otherwise the keys are looked at again, every file counting, once cur ended.
func (l *loop) changedDuring(ctx context.Context, cur *cycle, what string) {
	keys, err := l.keysDuring(ctx, cur)
	if err != nil {
		l.opts.Status(fmt.Sprintf("%s: %v; watching", what, err))
		return
	}
	l.again, l.againOn = true, what
	for _, id := range cur.tasks {
		if keys[id] != cur.keys[id] {
			l.opts.Status(fmt.Sprintf("%s: %s moved: stopping run %d to start again", what, id, cur.n))
			cur.cancel()
			return
		}
	}
	l.opts.Status(fmt.Sprintf("%s: no task of run %d moved: after it", what, cur.n))
}

// cycle is one run of watch.
type cycle struct {
	n       int
	tasks   []string
	keys    map[string]string
	cancel  context.CancelFunc
	started time.Time
	trigger string
	// start is the file state the run started with; nil when it scanned.
	start filestate.Source
}

type cycleResult struct {
	c   *cycle
	sum *summary.Summary
	err error
}

// startCycle plans the keys and runs ids.
func (l *loop) startCycle(ctx context.Context, ids []string, trigger string) {
	keys, err := l.keys(ctx)
	if err != nil {
		l.opts.Status(fmt.Sprintf("%s: %v; watching", trigger, err))
		return
	}
	l.startCycleWith(ctx, ids, keys, trigger)
}

// startCycleWith runs ids (with what they depend on) whose keys are keys.
func (l *loop) startCycleWith(ctx context.Context, ids []string, keys map[string]string, trigger string) {
	if len(ids) == 0 {
		l.afterCycle(ctx)
		return
	}
	l.runs++
	runCtx, cancel := context.WithCancel(ctx)
	c := &cycle{n: l.runs, tasks: l.closure(ids), keys: keys, cancel: cancel, started: time.Now(), trigger: trigger}
	l.current = c
	opts := l.runOptions(ctx, c.tasks)
	c.start = opts.Files
	l.opts.Status(fmt.Sprintf("run %d (%s): %s", c.n, trigger, names(ids)))
	l.wg.Go(func() {
		defer cancel()
		sum, err := l.opts.Run(runCtx, opts)
		l.cycleDone <- cycleResult{c: c, sum: sum, err: err}
	})
}

// runOptions answers the options of a run of ids: the selection's, completed as vx run's are.
func (l *loop) runOptions(ctx context.Context, ids []string) runner.Options {
	opts := l.plan.Options
	opts.TaskIDs = ids
	opts.Requested = nil
	for _, id := range l.plan.Requested {
		if slices.Contains(ids, id) {
			opts.Requested = append(opts.Requested, id)
		}
	}
	if l.opts.Configure != nil {
		l.opts.Configure(&opts)
	}
	opts.Files = l.files(ctx)
	return opts
}

// names lists task ids for the live line, the first few.
func names(ids []string) string {
	if len(ids) <= 4 {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:3], ", "), len(ids)-3)
}

// finished records a run's keys, says what it did, and starts what waited on it.
func (l *loop) finished(ctx context.Context, res cycleResult) {
	c := res.c
	l.current = nil
	if res.sum != nil {
		for _, t := range res.sum.Tasks {
			switch {
			case len(t.InputsChangedDuringRun) > 0:
				l.inputsMoved(t.TaskID, c.keys[t.TaskID], t.InputsChangedDuringRun)
			case t.Status != store.StatusCancelled && t.Status != store.StatusSkipped:
				l.lastKeys[t.TaskID] = c.keys[t.TaskID]
				delete(l.movedAt, t.TaskID)
			}
		}
		if l.opts.Report != nil {
			l.opts.Report(res.sum)
		}
	}
	l.opts.Status(fmt.Sprintf("run %d (%s) %s in %s; watching", c.n, c.trigger, tally(res), time.Since(c.started).Round(time.Millisecond)))
	if ctx.Err() != nil {
		return
	}
	if l.again {
		l.again = false
		keys, err := l.keys(ctx)
		if err != nil {
			l.opts.Status(fmt.Sprintf("%s: %v; watching", l.againOn, err))
			return
		}
		if moved := l.moved(keys); len(moved) > 0 {
			l.startCycleWith(ctx, moved, keys, l.againOn)
			return
		}
		l.opts.Status(fmt.Sprintf("%s: no task's key moved after run %d; watching", l.againOn, c.n))
	}
	l.afterCycle(ctx)
}

// inputsMoved records a task whose inputs (files) moved while it ran at key. Its outputs may be
// of files it no longer has, whatever its key says now, so it runs again (an edit undone during
// the run moves no key). When that repeat, at the same key, sees its inputs move again, the task
// moves them itself (tshy writes its package.json as it was on every build): its outputs are what
// it makes of its inputs, so it runs again only when its key moves, and from then on those files
// moving while it runs repeat no run of it. A watch beside such a tool settles.
func (l *loop) inputsMoved(id, key string, files []string) {
	own := !slices.ContainsFunc(files, func(f string) bool { return !slices.Contains(l.writesOwn[id], f) })
	if was, ok := l.movedAt[id]; ok && was == key && !own {
		l.writesOwn[id] = files
		own = true
		l.opts.Status(fmt.Sprintf("%s changed %s again while it ran, at the same key: the task writes them itself; it runs again when its key moves", id, strings.Join(files, ", ")))
	}
	if own {
		l.lastKeys[id] = key
		delete(l.movedAt, id)
		return
	}
	delete(l.lastKeys, id)
	l.movedAt[id] = key
}

// tally says what a run did: its statuses, counted.
func tally(res cycleResult) string {
	if res.sum == nil {
		if res.err != nil {
			return "failed to start: " + res.err.Error()
		}
		return "ran nothing"
	}
	counts := map[store.Status]int{}
	var ran []string
	for _, t := range res.sum.Tasks {
		counts[t.Status]++
		if t.Status.Ran() {
			ran = append(ran, t.TaskID)
		}
	}
	var parts []string
	for _, s := range []store.Status{store.StatusMiss, store.StatusHit, store.StatusFailed, store.StatusTimedOut,
		store.StatusBlocked, store.StatusCancelled, store.StatusSkipped} {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	line := "did nothing"
	if len(parts) > 0 {
		line = strings.Join(parts, ", ")
	}
	if len(ran) > 0 {
		line = "re-ran " + names(ran) + ": " + line
	}
	if res.err != nil {
		line += "; " + res.err.Error()
	}
	return line
}

// afterCycle starts the persistent tasks after the first run, and restarts those whose key
// moved after later ones.
func (l *loop) afterCycle(ctx context.Context) {
	if len(l.persistent) == 0 {
		return
	}
	keys, err := l.keys(ctx)
	if err != nil {
		l.opts.Status(fmt.Sprintf("persistent tasks: %v", err))
		return
	}
	if !l.started {
		l.started = true
		for _, id := range l.order {
			if l.persistent[id] {
				l.startServer(ctx, id, keys)
			}
		}
		return
	}
	l.restartServers(ctx, keys)
}

// server is a persistent task's run, with what depends on it.
type server struct {
	id     string
	cancel context.CancelFunc
}

type serverResult struct {
	s   *server
	sum *summary.Summary
	err error
}

// startServer starts a persistent task in a run of its own.
func (l *loop) startServer(ctx context.Context, id string, keys map[string]string) {
	ids := []string{id}
	for _, b := range l.order {
		if l.beside[b] && slices.Contains(l.closure([]string{b}), id) {
			ids = append(ids, b)
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	s := &server{id: id, cancel: cancel}
	l.servers[id] = s
	l.lastKeys[id] = keys[id]
	opts := l.runOptions(ctx, l.closure(ids))
	l.opts.Status("started " + id)
	l.wg.Go(func() {
		defer cancel()
		sum, err := l.opts.Run(runCtx, opts)
		l.serverDone <- serverResult{s: s, sum: sum, err: err}
	})
}

// restartServers restarts each persistent task whose key moved, when it says interruptible: true;
// it reports whether any key had moved.
func (l *loop) restartServers(ctx context.Context, keys map[string]string) (moved bool) {
	for _, id := range l.order {
		s := l.servers[id]
		if s == nil || !l.persistent[id] || keys[id] == l.lastKeys[id] {
			continue
		}
		l.lastKeys[id] = keys[id]
		moved = true
		if t, _ := l.ws.Task(id); t == nil || !t.Interruptible {
			l.opts.Status(id + ": its key moved; not interruptible: left running (interruptible: true lets vx watch restart it)")
			continue
		}
		l.opts.Status("restarting " + id + ": its key moved")
		s.cancel()
		l.waitServer(s)
		l.startServer(ctx, id, keys)
	}
	return moved
}

// waitServer waits for a stopped server's run to end, taking its result (and saying what other
// servers' ended meanwhile).
func (l *loop) waitServer(s *server) {
	for res := range l.serverDone {
		if res.s == s {
			if res.sum != nil && l.opts.Report != nil {
				l.opts.Report(res.sum)
			}
			return
		}
		l.serverEnded(res)
	}
}

// serverEnded says that a persistent task's run ended on its own.
func (l *loop) serverEnded(res serverResult) {
	if l.servers[res.s.id] == res.s {
		delete(l.servers, res.s.id)
	}
	if res.sum != nil && l.opts.Report != nil {
		l.opts.Report(res.sum)
	}
	msg := res.s.id + " stopped"
	if res.err != nil && !errors.Is(res.err, context.Canceled) {
		msg += ": " + res.err.Error()
	}
	l.opts.Status(msg)
}

// stopAll stops the run in progress and every persistent task, and waits for them.
func (l *loop) stopAll() {
	if l.current != nil {
		l.current.cancel()
	}
	for _, s := range l.servers {
		s.cancel()
	}
	done := make(chan struct{})
	go func() {
		l.wg.Wait()
		close(done)
	}()
	for {
		select {
		case <-done:
			return
		case <-l.cycleDone:
		case <-l.serverDone:
		}
	}
}
