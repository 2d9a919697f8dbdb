// Package runner runs a selection of tasks: in dependency order on a bounded pool of workers,
// longest remaining path first and within a memory budget (schedule.go, memory.go), each through
// `sh -c` in its project folder, with the environment it declares, its exec.env and secrets
// (env.go). Each task's cache key is computed first (package hasher); a hit restores the task's
// outputs and replays its log, a miss runs it and stores its outputs (a tar.zst archive) and its
// masked log in the cache. Every execution is recorded in the index, so that history answers
// questions about it later, and plans the next run's schedule.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/vzn/vx/engine/cache"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/mask"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/vxerr"
	"github.com/vzn/vx/proc"
)

// ExecFunc starts one child process and waits for it; proc.Run is the real one.
type ExecFunc func(ctx context.Context, spec proc.Spec) (proc.Result, error)

// Options configure a run.
type Options struct {
	Workspace *graph.Workspace
	// TaskIDs are the tasks to run with every task they depend on, in dependency order
	// (workspace.Selection.TaskIDs); Requested are the ones asked for.
	TaskIDs   []string
	Requested []string
	// Force runs every task even when its key hits; the run is still recorded and cached.
	Force bool
	// Bail stops starting tasks after the first failure.
	Bail bool
	// Concurrency is the number of workers; 0 means Workers(0, Getenv).
	Concurrency int
	// MemoryBudget is the memory, in bytes, the running tasks may reserve together, and
	// MemorySource where that figure came from; 0 means MemoryBudget("", Workspace, Getenv).
	MemoryBudget int64
	MemorySource string
	// Getenv reads env values and secrets; nil means os.Getenv.
	Getenv func(string) string
	// Environ is the environment every task starts from; nil means os.Environ().
	Environ []string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Output receives task output and progress (the CLI passes stderr); nil discards.
	Output io.Writer
	// Terminal draws live progress on Output (a terminal) instead of plain prefixed lines.
	Terminal bool
	// Events receives the run's events (EventStart, an EventTask per finished task, EventEnd), one
	// JSON line each; nil for none.
	Events io.Writer
	// Args is the command line, recorded with the run.
	Args []string
	// Grace is the delay between SIGTERM and SIGKILL of a task's group; 0 means proc's default.
	Grace time.Duration
	// Exec runs a child; nil means proc.Run.
	Exec ExecFunc
	// Store is the state folder to use; nil opens Workspace.CacheDir for the run.
	Store *store.Store
	// Notice receives one-line messages for the user (an index reset); nil drops them.
	Notice func(msg string)
	// DebugHash receives every hash input (VX_DEBUG_HASH=1); nil for none.
	DebugHash io.Writer
	// Sandbox says how the tasks' sandboxes are enforced (see SandboxOptions).
	Sandbox SandboxOptions
	// RemoteCache overrides the remote cache's mode (vx run --remote-cache): "off", "read",
	// "readwrite", or "" for the workspace's.
	RemoteCache string
}

func (o *Options) fill() error {
	if o.Workspace == nil {
		return errors.New("run: no workspace")
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Output == nil {
		o.Output = io.Discard
	}
	if o.Exec == nil {
		o.Exec = proc.Run
	}
	if o.Concurrency <= 0 {
		n, _, err := Workers(0, o.Getenv)
		if err != nil {
			return err
		}
		o.Concurrency = n
	}
	if o.MemoryBudget <= 0 {
		n, source, err := MemoryBudget("", o.Workspace, o.Getenv)
		if err != nil {
			return err
		}
		o.MemoryBudget, o.MemorySource = n, source
	}
	return nil
}

// node is one task of the run's graph.
type node struct {
	index      int // position in TaskIDs (dependency order)
	task       *graph.Task
	project    *graph.Project
	deps       []*node
	dependents []*node
	pending    int
	// cost is the task's predicted duration (its p50, else the median task's), priority its
	// remaining path (prioritize); reserve the memory it reserves and reserveFrom from what.
	cost, priority int64
	reserve        int64
	reserveFrom    string
	started        bool
	done           bool
	ok             bool // hit or miss
	key            string
	exec           store.Execution
	// A persistent task releases its dependents once its key is known (they run beside it), and
	// is stopped through stop when the last of them has finished.
	released bool
	stop     context.CancelFunc
	stopped  bool
}

// outcome is what a worker answers for one task.
type outcome struct {
	n        *node
	exec     store.Execution
	key      string
	manifest []byte
	touched  string // the cache key hit, when its last-use time is to be recorded (cache.Hit.Touch)
	replay   []byte // the log to show for a hit
}

// keyed says that a persistent task's key is known and its command is starting.
type keyed struct {
	n   *node
	key string
}

type runState struct {
	opts Options
	st   *store.Store
	// keyed receives persistent tasks as their commands start; nil outside schedule.
	keyed   chan keyed
	hasher  *hasher.Hasher
	masker  *mask.Masker
	display *display
	runID   string
	sandbox sandboxState
	// cache is the run's cache, local and remote.
	cache *cache.Cache
}

// Run runs the tasks and answers the run summary. The summary says ok false (and exitCode 1) when a
// task failed or the run was cancelled; the error is for what kept the run from being recorded at all.
func Run(ctx context.Context, opts Options) (*history.Summary, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	nodes, err := buildNodes(opts.Workspace, opts.TaskIDs)
	if err != nil {
		return nil, err
	}
	st := opts.Store
	if st == nil {
		// The index survives a cancelled run: its writes are not tied to the run's context.
		st, err = store.Open(context.WithoutCancel(ctx), opts.Workspace.CacheDir, store.Options{ResetOtherVersion: true, Now: opts.Now})
		if err != nil {
			return nil, fmt.Errorf("open the state folder: %w", err)
		}
		defer st.Close()
	}
	if st.Reset != "" && opts.Notice != nil {
		opts.Notice(fmt.Sprintf("reset %s: it held %s", store.IndexPath(st.Dir()), st.Reset))
	}
	dbctx := context.WithoutCancel(ctx)
	salt, err := store.Salt(st.Dir(), true)
	if err != nil {
		return nil, err
	}
	h := hasher.New(hasher.Options{Workspace: opts.Workspace, Salt: salt, Warn: opts.Notice,
		Getenv: opts.Getenv, Debug: opts.DebugHash, Now: opts.Now})
	// The workspace's listing (a git call) is taken while the index is read.
	var prefetch sync.WaitGroup
	defer prefetch.Wait()
	prefetch.Go(func() { h.Prefetch(ctx) })
	stats, err := st.FileStats(dbctx)
	if err != nil {
		return nil, err
	}
	h.SetStats(stats)
	if _, err := estimates(dbctx, st, opts.Workspace, nodes); err != nil {
		return nil, err
	}
	secrets := append([]string(nil), opts.Workspace.Secrets...)
	for _, n := range nodes {
		for _, name := range n.task.SecretNames() {
			if err := mask.Check(name, opts.Getenv(name)); err != nil {
				return nil, fmt.Errorf("%s: %w", n.task.ID, err)
			}
			secrets = append(secrets, opts.Getenv(name))
		}
		secrets = append(secrets, credentialValues(opts.Workspace, n.task, opts.Environ)...)
	}
	remoteCfg := cache.ResolveRemote(opts.Workspace.RemoteCache, opts.Getenv, opts.RemoteCache, opts.Notice)
	secrets = append(secrets, remoteCfg.Secrets()...)
	r := &runState{
		opts: opts, st: st,
		masker: mask.New(secrets...),
		hasher: h,
	}
	r.display = newDisplay(opts.Output, opts.Terminal, r.masker, len(nodes))
	started := opts.Now()
	r.runID = store.NewRunID(started)
	host, _ := os.Hostname()
	run := store.Run{ID: r.runID, Started: started, Status: store.RunRunning, PID: os.Getpid(), Host: host,
		Args: opts.Args, Requested: opts.Requested, TaskCount: len(nodes), Concurrency: opts.Concurrency,
		MemoryBudget: opts.MemoryBudget, MemorySource: opts.MemorySource}
	if err := st.BeginRun(dbctx, run); err != nil {
		return nil, err
	}
	r.event(startEvent(r.runID, len(nodes)))

	if r.cache, err = cache.Open(ctx, cache.Options{Workspace: opts.Workspace, Store: st, Files: h, Remote: remoteCfg,
		Now: opts.Now, Notice: r.display.notice, Warn: opts.Notice, Mask: r.masker.String}); err != nil {
		return nil, err
	}
	execs, recErr := r.schedule(ctx, nodes)
	// The uploads still in flight end here, bounded: the run is not done before them.
	remoteRun := r.cache.Close()

	finished := opts.Now()
	run.Finished = finished
	run.Status = store.RunOK
	cancelled := ctx.Err() != nil
	for _, e := range execs {
		if e.Status != history.StatusHit && e.Status != history.StatusMiss {
			run.Status = store.RunFailed
		}
	}
	if cancelled {
		run.Status = store.RunCancelled
	}
	if run.Status != store.RunOK {
		run.ExitCode = vxerr.ExitFailure
	}
	if err := st.PutFileStats(dbctx, r.hasher.Updates()); err != nil && recErr == nil {
		recErr = err
	}
	if err := st.FinishRun(dbctx, r.runID, run.Status, run.ExitCode, finished); err != nil && recErr == nil {
		recErr = err
	}
	r.display.finish()
	sum := history.Summarize(run, execs)
	if recErr == nil {
		// Answer the run as the index now holds it, so that this summary and `vx last` (and the
		// runTasks tool) are one document, to the millisecond.
		if recorded, err := history.Last(dbctx, st, r.runID); err == nil {
			sum = recorded
		}
	}
	sum.RemoteCache = remoteRun
	r.event(endEvent(r.runID, sum.OK, sum.ExitCode))
	if recErr != nil {
		return sum, fmt.Errorf("record run %s: %w", r.runID, recErr)
	}
	return sum, nil
}

func buildNodes(ws *graph.Workspace, ids []string) ([]*node, error) {
	byID := make(map[string]*node, len(ids))
	nodes := make([]*node, 0, len(ids))
	for i, id := range ids {
		t, ok := ws.Task(id)
		if !ok {
			return nil, vxerr.Usagef("unknown task %s", id)
		}
		p, ok := ws.Project(t.Project)
		if !ok {
			return nil, fmt.Errorf("task %s: no project %s", id, t.Project)
		}
		if _, dup := byID[id]; dup {
			continue
		}
		n := &node{index: i, task: t, project: p}
		byID[id] = n
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		for _, d := range n.task.DependsOn {
			dn, ok := byID[d]
			if !ok {
				return nil, fmt.Errorf("task %s depends on %s, which the selection lacks", n.task.ID, d)
			}
			n.deps = append(n.deps, dn)
			dn.dependents = append(dn.dependents, n)
			n.pending++
		}
	}
	return nodes, nil
}

// flushEvery is how often finished executions are handed to the recorder while a run goes on, and
// flushRows how many may wait for it. The recorder commits them beside the workers, merging what
// arrives while it commits; a crash loses at most this much history, never a cache entry (each is
// committed as it is made).
const (
	flushEvery = 250 * time.Millisecond
	flushRows  = 256
)

// schedule runs the graph and answers every task's execution row, in dependency order. It owns the
// workers: it returns only after each has ended.
func (r *runState) schedule(ctx context.Context, nodes []*node) ([]store.Execution, error) {
	dbctx := context.WithoutCancel(ctx)
	workers := r.opts.Concurrency
	results := make(chan outcome, len(nodes))
	r.keyed = make(chan keyed, len(nodes))
	var wg sync.WaitGroup
	defer wg.Wait()

	slots := &slots{workers: workers, budget: r.opts.MemoryBudget}
	for _, n := range nodes {
		if n.pending == 0 {
			slots.push(n)
		}
	}
	var batch store.Batch
	rec := newRecorder(dbctx, r.st)
	defer rec.close() // a second close only waits for the first
	flush := func() {
		batch.TouchedAt = r.opts.Now()
		rec.add(batch)
		batch = store.Batch{}
	}
	// stopServer stops a persistent task once every dependent it was started for has finished.
	stopServer := func(d *node) {
		if d.stop == nil || d.stopped || d.done {
			return
		}
		for _, x := range d.dependents {
			if !x.done {
				return
			}
		}
		d.stopped = true
		d.stop()
	}
	finish := func(n *node, e store.Execution) {
		if n.started {
			e.ReservedBytes = n.reserve
		}
		n.done = true
		n.exec = e
		batch.Executions = append(batch.Executions, e)
		r.display.finished(e)
		r.event(taskEvent(e, r.display.doneCount(), len(nodes)))
		for _, d := range n.deps {
			if d.task.Persistent {
				stopServer(d)
			}
		}
	}
	release := func(n *node) {
		if n.released {
			return
		}
		n.released = true
		for _, d := range n.dependents {
			if d.pending--; d.pending == 0 && !d.done {
				slots.push(d)
			}
		}
	}

	lastFlush := r.opts.Now()
	servers, decided := 0, 0
	stopping := false
	done := ctx.Done()
	for decided < len(nodes) {
		for !stopping {
			n := slots.next()
			if n == nil {
				break
			}
			n.started = true
			taskCtx := ctx
			if n.task.Persistent {
				// A server takes no worker: it waits on its dependents, not the other way round.
				servers++
				var stop context.CancelFunc
				taskCtx, stop = context.WithCancel(ctx)
				n.stop = stop
			}
			depKeys := make(map[string]string, len(n.deps))
			for _, d := range n.deps {
				depKeys[d.task.ID] = d.key
			}
			r.display.started(n.task.ID)
			wg.Add(1)
			go func() {
				defer wg.Done()
				results <- r.execute(taskCtx, n, depKeys)
			}()
		}
		if slots.running == 0 && (slots.ready.Len() == 0 || stopping) && servers > 0 {
			// Nothing else can start (once every server has released its dependents): stop the
			// servers that were started for dependents.
			settled := true
			for _, n := range nodes {
				if n.stop != nil && !n.done && !n.released {
					settled = stopping
				}
			}
			for _, n := range nodes {
				if settled && n.stop != nil && !n.done && !n.stopped && len(n.dependents) > 0 {
					n.stopped = true
					n.stop()
				}
			}
		}
		if slots.running+servers == 0 {
			break
		}
		select {
		case <-done:
			stopping, done = true, nil
			continue
		case k := <-r.keyed:
			k.n.key = k.key
			release(k.n)
		case o := <-results:
			n := o.n
			if n.task.Persistent {
				servers--
				n.stop()
				if n.stopped && o.exec.Status == history.StatusCancelled && ctx.Err() == nil {
					// Stopped by vx after its dependents finished: it served them and passed.
					o.exec.Status = history.StatusMiss
				}
			}
			slots.done(n)
			decided++
			if n.key == "" {
				n.key = o.key
			}
			if o.manifest != nil && (o.exec.Status != history.StatusHit || o.exec.CacheSource == history.CacheSourceRemote) {
				// A local hit's manifest was kept when its entry was made; a remote hit's entry
				// was made on another machine.
				batch.Manifests = append(batch.Manifests, store.ManifestRow{Hash: o.key, TaskID: n.task.ID, Manifest: o.manifest})
			}
			if o.touched != "" {
				batch.Touched = append(batch.Touched, o.touched)
			}
			if o.replay != nil {
				r.display.replay(n.task.ID, o.replay)
			}
			finish(n, o.exec)
			switch o.exec.Status {
			case history.StatusHit, history.StatusMiss:
				n.ok = true
				release(n)
			case history.StatusCancelled:
			default:
				decided += r.block(n, n.task.ID, finish)
				if r.opts.Bail {
					stopping = true
				}
			}
			// Rows go to the index in batches: a commit per task would cost more than a no-op task.
			if len(batch.Executions) >= flushRows || r.opts.Now().Sub(lastFlush) >= flushEvery {
				flush()
				lastFlush = r.opts.Now()
			}
		}
	}
	wg.Wait()
	// Whatever never started was skipped: say what it still waited for.
	for _, n := range nodes {
		if n.done {
			continue
		}
		var waiting []string
		for _, d := range n.deps {
			if !d.ok && !d.released {
				waiting = append(waiting, d.task.ID)
			}
		}
		finish(n, r.row(n, history.StatusSkipped, func(e *store.Execution) { e.NotReady = waiting }))
	}
	flush()
	recErr := rec.close()
	execs := make([]store.Execution, len(nodes))
	for i, n := range nodes {
		execs[i] = n.exec
	}
	sort.SliceStable(execs, func(i, j int) bool { return execs[i].Ord < execs[j].Ord })
	return execs, recErr
}

// block marks every task downstream of failed as blocked by root, answering how many it decided.
func (r *runState) block(failed *node, root string, finish func(*node, store.Execution)) int {
	count := 0
	for _, d := range failed.dependents {
		if d.done || d.started {
			continue
		}
		finish(d, r.row(d, history.StatusBlocked, func(e *store.Execution) { e.BlockedBy = root }))
		count++
		count += r.block(d, root, finish)
	}
	return count
}

// row is an execution row for a task that did not run.
func (r *runState) row(n *node, status string, set func(*store.Execution)) store.Execution {
	e := store.Execution{RunID: r.runID, TaskID: n.task.ID, Project: n.task.Project, Task: n.task.Name, Ord: n.index,
		Status: status, Started: r.opts.Now()}
	if set != nil {
		set(&e)
	}
	return e
}

// event writes one line to the events stream, if there is one.
func (r *runState) event(ev Event) {
	if r.opts.Events != nil {
		WriteEvent(r.opts.Events, ev)
	}
}
