// Package runner runs a selection of tasks: in dependency order on a bounded pool of workers,
// longest remaining path first and within a memory budget (schedule.go, memory.go), each through
// `sh -c` in its project folder, with the environment it declares, its exec.env and secrets
// (env.go). A task's life is a phase that the scheduler's loop moves (phase.go, loop.go). Each
// task's cache key is computed first (package hasher); then the task's lock is taken (package
// tasklock: one process at a time runs a task of a workspace); a hit restores the task's outputs
// and replays its log, a miss runs it and stores its outputs (a tar.zst archive) and its masked
// log in the cache (task.go). Every execution is recorded in the index, so that history answers
// questions about it later, and plans the next run's schedule.
package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vzn/vx/engine/cache"
	"github.com/vzn/vx/engine/counters"
	"github.com/vzn/vx/engine/executor"
	"github.com/vzn/vx/engine/executor/remoteexec"
	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/handoff"
	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/pkgscript"
	"github.com/vzn/vx/engine/profilerec"
	"github.com/vzn/vx/engine/remote"
	"github.com/vzn/vx/engine/resources"
	"github.com/vzn/vx/engine/runout"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
	"github.com/vzn/vx/engine/taskenv"
	"github.com/vzn/vx/engine/taskmutex"
	"github.com/vzn/vx/engine/vxerr"
)

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
	// Concurrency is the number of workers; 0 means resources.Workers(0, Getenv).
	Concurrency int
	// MemoryBudget is the memory, in bytes, the running tasks may reserve together, and
	// MemorySource where that figure came from; 0 means resources.MemoryBudget("", Workspace, Getenv).
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
	// Exec runs a child; nil means proc.Run (see executor.Local).
	Exec executor.ExecFunc
	// Store is the state folder to use; nil opens Workspace.CacheDir for the run.
	Store *store.Store
	// KeyLockDir is the folder of the cache store the run's key locks are kept in (in its locks
	// folder), which every checkout sharing that store uses; "" means the shared store's.
	KeyLockDir string
	// Version is vx's version, recorded with the run (vx last's vxVersion).
	Version string
	// Notice receives one-line messages for the user (an index reset); nil drops them.
	Notice func(msg string)
	// DebugHash receives every hash input (VX_DEBUG_HASH=1); nil for none.
	DebugHash io.Writer
	// Sandbox says how the tasks' sandboxes are enforced (see taskenv.SandboxOptions).
	Sandbox taskenv.SandboxOptions
	// RemoteCache overrides the remote cache's mode (vx run --remote-cache): "off", "read",
	// "readwrite", or "" for the workspace's.
	RemoteCache string
	// Cache says which cache layers the run reads and writes (vx run --cache, --no-cache); the
	// zero value reads and writes both. Force still reads none.
	Cache cache.Use
	// NothingAffected, with no TaskIDs, says why there is nothing to run
	// (workspace.Selection.NothingAffected): such a run opens no state folder, records no run and
	// answers an empty summary that is a success.
	NothingAffected string
	// Logs says which task output Output shows, in what order and colour (vx run --output-logs,
	// --log-order, --color); the zero value shows it all as it comes.
	Logs runout.LogOptions
	// Files is the workspace's file state as a watcher knows it (filestate.Ask, engine/watch);
	// nil scans: a git listing, a stat of each file, the index's stat cache.
	Files filestate.Source
	// Early is git's listing (and, for a fresh checkout, its index) asked for while the config
	// loaded (hasher.StartEarly); the run's hasher takes it where it scans that workspace.
	Early *hasher.Early
	// Retry, when set, is how many times a failed command is run again, for every task (vx run
	// --retry); nil leaves each task its exec.retries.
	Retry *int
	// Tags are the run's key=value labels (vx run --tag), recorded with it.
	Tags map[string]string
	// RunTimeout bounds the whole run (vx run --timeout, runTimeout): past it the run is
	// cancelled as a signal cancels it, and its summary says it timed out; 0 for no bound.
	RunTimeout time.Duration
	// Known is what a vx mcp handed the run (keys, index entries, hits in place), planned from
	// Files, the workspace and environment of this run (the hand-off's stamp checked): taken in
	// place of hashing and reading while the run has written nothing (see handoff.Known); nil
	// hashes every task and reads the index.
	Known *handoff.Known
	// CacheScope is the remote cache scope the run reads and writes as (vx run --cache-scope);
	// "" is VX_CACHE_SCOPE's, else the workspace's cacheScope, else the trusted one
	// (remote.ResolveScope).
	CacheScope string
	// ContinueAlways runs the dependents of a task that failed or timed out as if it had passed
	// (vx run --continue=always, as turbo's); false blocks them.
	ContinueAlways bool
	// RestoreOnly are the tasks that may only be restored from the cache (vx run
	// --exclude-dependencies: the dependencies of the tasks named): one whose key misses fails,
	// saying so, instead of running; nil for none.
	RestoreOnly map[string]bool
	// Stdin is what an interactive task's command reads; nil means vx's own stdin. Every other
	// command reads nothing (/dev/null).
	Stdin io.Reader
	// RemoteExec overrides the workspace's remote execution for the run (vx run --remote-exec,
	// --no-remote-exec): "on", "off", or "" for the workspace's remote.execute and each task's
	// exec.remote.
	RemoteExec string
	// remoteExecutor, when set, is the remote executor in place of the workspace's engine (a
	// test's), given where a remote task's stages go.
	remoteExecutor func(stages func(taskID string, u remoteexec.Update)) executor.Executor
	// Download is what of the run's remote work comes back (vx run --download: graph.DownloadAll,
	// DownloadRequested, DownloadMinimal); "" means the workspace's remote.download, else all.
	Download string
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
	if o.Stdin == nil {
		o.Stdin = os.Stdin
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Output == nil {
		o.Output = io.Discard
	}
	if o.Concurrency <= 0 {
		n, _, err := resources.Workers(0, o.Getenv)
		if err != nil {
			return err
		}
		o.Concurrency = n
	}
	if _, err := pkgscript.RunnerFor(o.Workspace.ScriptsRunner, o.Getenv); err != nil {
		return err
	}
	if o.MemoryBudget <= 0 {
		n, source, err := resources.MemoryBudget("", o.Workspace, o.Getenv)
		if err != nil {
			return err
		}
		o.MemoryBudget, o.MemorySource = n, source
	}
	return nil
}

// outcome is what a worker answers for one task.
type outcome struct {
	n        *node
	exec     store.Execution
	key      string
	manifest []byte
	touched  string // the cache key hit, when its last-use time is to be recorded (cache.Hit.Touch)
	replay   []byte // the log to show for a hit
	// waited is how long the worker waited for another process that ran the task.
	waited time.Duration
	// elsewhere says that a persistent task was skipped because another process runs it.
	elsewhere bool
	// panicked says that the worker panicked: the pool re-raises it at Wait.
	panicked bool
	// wrote says that the attempt wrote in its project (wrote).
	wrote  bool
	timing taskTiming
}

// taskTiming is a profile's timing of an attempt: started and ended bound it on its worker,
// measuredFrom is where its row's duration was measured from (the command's start, for a task
// that ran one).
type taskTiming struct {
	started, measuredFrom, ended time.Time
}

type runState struct {
	opts   Options
	st     *store.Store
	hasher *hasher.Hasher
	// keptRemote counts the tasks ended so far whose outputs stayed remote (their row's
	// OutputsRemote): while it is zero no local task has upstream outputs to fetch (localFetch).
	// The loop adds to it before it starts a dependent.
	keptRemote atomic.Int64
	// masker masks the run's secrets out of what it shows and keeps (taskenv.Masker's).
	masker interface {
		String(s string) string
		Bytes(b []byte) []byte
	}
	display *runout.Display
	runID   string
	sandbox *taskenv.Sandboxes
	// cache is the run's cache, local and remote, opened with remoteCfg once the run is recorded.
	cache     *cache.Cache
	remoteCfg cache.RemoteConfig
	// locks hold each task for this process while it runs it (one process at a time per task).
	locks *taskmutex.Locks
	// undeclared are the misses to look at for outputs nobody declared, once the tasks are done.
	undeclared taskenv.Undeclared
	// handed are the keys the run was handed (Options.Known), nil for none.
	handed *handedKeys
	// writes are the project folders the run wrote in; ahead keys ready tasks beside the
	// workers (ahead.go), nil when it does not.
	writes writeLog
	ahead  *keysAhead
	// commands counts the task commands started.
	commands atomic.Int64
	// inputsChanged are the tasks whose inputs changed while they ran, for the summary.
	inputsChanged changedInputs
	// executor runs each command that misses: on this machine (executor.Local, through
	// Options.Exec).
	executor executor.Executor
	// timedOut says that the run's timeout ended it (Options.RunTimeout).
	timedOut bool
	// keys hold each key the run executes for this process, across the checkouts sharing the
	// cache store (KeyLockDir); waits is what tasks waited for there, for the summary.
	keys  *taskmutex.KeyLocks
	waits keyWaits
	// remoteOn says that the run's executor may run tasks on a REAPI engine (remoteexec.go).
	remoteOn bool
	// remoteAll says that the run sends every task that can run remotely (--remote-exec),
	// remoteCap how many run remotely at once, remoteGone that the engine is gone for the rest
	// of the run (the Chooser fell back).
	remoteAll  bool
	remoteCap  int
	remoteGone atomic.Bool
	// eventsMu orders the lines of the events stream (event).
	eventsMu sync.Mutex
	// cutoff looks a task whose key missed up by its Action digest (cutoff.go); nil when the run
	// executes nothing remotely.
	cutoff *cutoffLookup
	// engine is the REAPI engine's connection when remoteOn (download.go fetches from its CAS).
	engine *remote.REAPI
}

// readsCache reports whether the run looks its tasks up in the cache (not under --force, nor
// with no layer to read).
func (r *runState) readsCache() bool {
	u := r.opts.Cache
	return !r.opts.Force && (u.LocalRead() || u.RemoteRead() && r.remoteCfg.Reads())
}

// ReadsRemoteCache reports whether a run of opts looks its tasks up in a remote cache: one is
// configured (or named by the environment), its mode reads, and the run's cache use reads the
// remote layer. A plan knows the local cache only; a task it predicts to miss may still hit there.
func ReadsRemoteCache(opts Options) bool {
	if opts.Force || !opts.Cache.RemoteRead() {
		return false
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return cache.ResolveRemote(opts.Workspace.RemoteCache, getenv, opts.RemoteCache, nil).Reads()
}

// writesCache reports whether the run stores what its tasks make in the cache: locally, or in
// a remote cache it writes.
func (r *runState) writesCache() bool {
	u := r.opts.Cache
	return u.LocalWrite() || u.RemoteWrite() && r.remoteCfg.Writes()
}

// Run runs the tasks and answers the run summary. The summary says ok false (and exitCode 1) when a
// task failed or the run was cancelled; the error is for what kept the run from being recorded at all.
func Run(ctx context.Context, opts Options) (*summary.Summary, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	if err := refuseNested(opts.Workspace.Root, opts.Getenv); err != nil {
		return nil, err
	}
	if len(opts.TaskIDs) == 0 && opts.NothingAffected != "" {
		return nothingToRun(opts), nil
	}
	nodes, err := buildNodes(opts.Workspace, opts.TaskIDs)
	if err != nil {
		return nil, err
	}
	ctx, stopTimer := withRunTimeout(ctx, opts.RunTimeout)
	defer stopTimer()
	var keys []string
	var known *handoff.Index
	if opts.Known != nil {
		keys, known = handedBeforeOpen(opts, nodes)
	}
	st := opts.Store
	if st == nil {
		if st, err = openStore(ctx, opts); err != nil {
			return nil, err
		}
		defer st.Close()
	}
	noteStore(st, opts.Notice)
	// The entries of the keys handed over are read while the run gets ready, unless the server
	// that handed them knew them; without keys, each task's newest entry, which it most often hits.
	var prefetch *cache.Prefetch
	switch {
	case known != nil:
		prefetch = cache.KnownEntries(known.Entries, known.Unlisted)
	case len(keys) > 0:
		prefetch = cache.StartPrefetch(context.WithoutCancel(ctx), st, keys)
	default:
		prefetch = cache.StartNewestPrefetch(context.WithoutCancel(ctx), st, lookedUpTaskIDs(opts, nodes))
	}
	defer prefetch.Wait()
	r, closeRun, err := newRunState(ctx, opts, st, nodes, known)
	if err != nil {
		return nil, err
	}
	defer closeRun()
	defer r.useRemoteExecution()()
	started := opts.Now()
	r.runID = store.NewRunID(started)
	host, _ := os.Hostname()
	run := store.Run{ID: r.runID, Started: started, Status: store.RunRunning, PID: os.Getpid(), Host: host,
		Args: opts.Args, Requested: opts.Requested, TaskCount: len(nodes), Concurrency: opts.Concurrency,
		MemoryBudget: opts.MemoryBudget, MemorySource: opts.MemorySource, Tags: opts.Tags,
		Context: runContext(opts.Workspace.Root, opts.Version, opts.Getenv)}
	dbctx := context.WithoutCancel(ctx)
	if err := st.BeginRun(dbctx, run); err != nil {
		return nil, err
	}
	r.event(runout.StartEvent(r.runID, len(nodes)))

	if r.cache, err = cache.Open(ctx, cache.Options{Workspace: opts.Workspace, Store: st, Files: r.hasher, Remote: r.remoteCfg,
		Now: opts.Now, Notice: r.display.Notice, Warn: opts.Notice, Mask: r.masker.String, Prefetch: prefetch,
		Intact: r.handed.intactFunc(), Use: opts.Cache}); err != nil {
		return nil, err
	}
	r.useDownloads(nodes)
	region := profilerec.Start(ctx, "run tasks")
	execs, recErr := r.schedule(ctx, nodes)
	region.End()
	if r.timedOut = runTimedOut(ctx); r.timedOut && opts.Notice != nil {
		opts.Notice(fmt.Sprintf("the run timed out after %s: what still ran was stopped", opts.RunTimeout))
	}
	r.undeclared.Check(ctx, r.opts.Workspace, r.display.Notice)
	// The uploads still in flight end here, bounded: the run is not done before them.
	region = profilerec.Start(ctx, "close cache")
	remoteRun := r.cache.Close()
	region.End()
	return r.finishRun(dbctx, run, execs, ctx.Err() != nil, remoteRun, recErr)
}

// errRunTimedOut is the cause of a run's context that its RunTimeout ended.
var errRunTimedOut = errors.New("the run's timeout ran out")

// withRunTimeout answers ctx bounded by timeout (none for 0): when it runs out, the run is
// cancelled as a signal cancels it (each running task's group gets SIGTERM, then its grace).
func withRunTimeout(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeoutCause(ctx, timeout, errRunTimedOut)
}

// runTimedOut reports whether ctx ended because the run's timeout ran out.
func runTimedOut(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errRunTimedOut)
}

// lookedUpTaskIDs answers the ids of the tasks whose key the run looks up in the cache: none
// under --force, which runs every task.
func lookedUpTaskIDs(opts Options, nodes []*node) []string {
	if opts.Force || !opts.Cache.LocalRead() {
		return nil
	}
	ids := make([]string, 0, len(nodes))
	for _, n := range nodes {
		if n.task.Cache {
			ids = append(ids, n.task.ID)
		}
	}
	return ids
}

// newRunState prepares a run of nodes: the hasher (its listing taken in the background while the
// index is read), the schedule's estimates (from the runs known, when a vx mcp handed them), the
// masker of every secret the tasks read, the cache. close waits for what it started.
func newRunState(ctx context.Context, opts Options, st *store.Store, nodes []*node, known *handoff.Index) (r *runState, close func(), err error) {
	dbctx := context.WithoutCancel(ctx)
	salt, err := store.Salt(st.Dir(), true)
	if err != nil {
		return nil, nil, err
	}
	h := hasher.New(hasher.Options{Workspace: opts.Workspace, Salt: salt, Warn: opts.Notice,
		Getenv: opts.Getenv, Debug: opts.DebugHash, Now: opts.Now, Files: opts.Files, Environ: opts.Environ, Counters: counters.From(ctx), Early: opts.Early})
	// The workspace's listing (a git call) is taken while the index is read; a run handed its
	// keys hashes only what it must, and lists only then.
	var prefetch sync.WaitGroup
	if opts.Known == nil || len(opts.Known.Keys) == 0 || opts.Sandbox.Agent {
		prefetch.Go(func() {
			defer profilerec.StartBackground(ctx, "git listing").End()
			h.Prefetch(ctx)
		})
	}
	defer func() {
		if err != nil { // a run that does not start leaves no listing running
			prefetch.Wait()
		}
	}()
	region := profilerec.Start(ctx, "read index")
	err = loadFileState(ctx, dbctx, h, st, opts.Files, &prefetch)
	if err == nil {
		var handed knownRuns
		if known != nil {
			handed = knownRuns(known.Runs)
		}
		_, err = memoEstimates(dbctx, st, opts.Workspace, nodes, handed.recentRuns)
	}
	region.End()
	if err != nil {
		return nil, nil, err
	}
	remoteCfg := cache.ResolveRemote(opts.Workspace.RemoteCache, opts.Getenv, opts.RemoteCache, opts.Notice)
	scope, _, err := remote.ResolveScope(opts.CacheScope, opts.Getenv, opts.Workspace.CacheScope)
	if err != nil {
		return nil, nil, err
	}
	remoteCfg = remoteCfg.WithScope(scope)
	remoteCfg = remoteCfg.WithRoot(opts.Workspace.Root)
	tasks := make([]*graph.Task, len(nodes))
	for i, n := range nodes {
		tasks[i] = n.task
	}
	masker, err := taskenv.Masker(opts.Workspace, tasks, opts.Environ, opts.Getenv, remoteCfg.Secrets())
	if err != nil {
		return nil, nil, err
	}
	r = &runState{opts: opts, st: st, masker: masker, hasher: h,
		display: runout.NewDisplay(opts.Output, opts.Terminal, masker, len(nodes), opts.Logs, persistentIDs(nodes)),
		locks:   taskmutex.New(st.Dir(), opts.Workspace.Root), remoteCfg: remoteCfg, executor: executor.Local{Exec: opts.Exec},
		keys: taskmutex.Keys(cmp.Or(opts.KeyLockDir, st.SharedDir(), st.Dir()), opts.Workspace.Root), waits: keyWaits{}}
	r.sandbox = taskenv.NewSandboxes(opts.Workspace, opts.Sandbox, r.display.Notice)
	// A plan's keys hold each task's declared sandbox; --sandbox-agent's confinement enters the
	// run's keys (taskenv.Sandboxes.Effective), so such a run hashes every task.
	if opts.Known != nil && !opts.Sandbox.Agent {
		r.handed = newHandedKeys(opts.Known)
	}
	return r, func() { prefetch.Wait(); _ = h.Close() }, nil
}

// loadFileState readies the hasher's file state: with a watcher's, the stat cache is read only
// if a file it had not hashed is asked about; without, the listing is taken (on prefetch) while
// the stat cache is read.
func loadFileState(ctx, dbctx context.Context, h *hasher.Hasher, st *store.Store, files filestate.Source, prefetch *sync.WaitGroup) error {
	if files != nil {
		h.SetStatsLoader(func() (*store.StatCache, error) { return st.FileStats(dbctx) })
		return nil
	}
	prefetch.Go(func() {
		defer profilerec.StartBackground(ctx, "git listing").End()
		h.Prefetch(ctx)
	})
	stats, err := st.FileStats(dbctx)
	if err != nil {
		return err
	}
	h.SetStats(stats)
	return nil
}

// finishRun records the end of the run and answers its summary, as the index now holds it.
func (r *runState) finishRun(dbctx context.Context, run store.Run, execs []store.Execution, cancelled bool,
	remoteRun *summary.RemoteCacheRun, recErr error) (*summary.Summary, error) {
	defer profilerec.Start(dbctx, "record run").End()
	run.Finished = r.opts.Now()
	run.Status = store.RunOK
	for _, e := range execs {
		if e.Status != store.StatusHit && e.Status != store.StatusMiss {
			run.Status = store.RunFailed
		}
	}
	if cancelled {
		run.Status = store.RunCancelled
	}
	if run.Status != store.RunOK {
		run.ExitCode = vxerr.ExitFailure
	}
	if err := r.st.PutFileStats(dbctx, r.hasher.Updates()); err != nil && recErr == nil {
		recErr = err
	}
	if err := r.st.FinishRun(dbctx, r.runID, run.Status, run.ExitCode, run.Finished); err != nil && recErr == nil {
		recErr = err
	}
	r.display.Finish()
	// Answer the run as the index now holds it (store's Recorded: what it reads back, without
	// reading it), so that this summary and `vx last` (and the runTasks tool) are one document,
	// to the millisecond.
	recorded := make([]store.Execution, len(execs))
	for i, e := range execs {
		recorded[i] = e.Recorded()
	}
	sum := summary.Summarize(run.Recorded(), recorded)
	sum.RemoteCache = remoteRun
	sum.TimedOut = cancelled && r.timedOut
	r.inputsChanged.fill(sum)
	r.waits.fill(sum)
	r.event(runout.EndEvent(r.runID, sum.OK, sum.ExitCode, r.commands.Load()))
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

// row is an execution row for a task that did not run.
func (r *runState) row(n *node, status store.Status, set func(*store.Execution)) store.Execution {
	e := store.Execution{RunID: r.runID, TaskID: n.task.ID, Project: n.task.Project, Task: n.task.Name, Ord: n.index,
		Status: status, Started: r.opts.Now()}
	if set != nil {
		set(&e)
	}
	return e
}

// event writes one line to the events stream, if there is one: from the scheduler's loop, and
// from the workers of remote tasks (their stages), one line at a time.
func (r *runState) event(ev runout.Event) {
	if r.opts.Events != nil {
		r.eventsMu.Lock()
		defer r.eventsMu.Unlock()
		runout.WriteEvent(r.opts.Events, ev)
	}
}

// nothingToRun is the summary of a run with no task to run (opts.NothingAffected): ok, exit
// status 0, no run id, no task, the reason in NoTasks. Nothing is recorded.
func nothingToRun(opts Options) *summary.Summary {
	return &summary.Summary{OK: true, Status: store.RunOK, StartedAt: opts.Now().UTC(), Requested: []string{},
		Tasks: []summary.TaskResult{}, Memory: summary.Memory{BudgetBytes: opts.MemoryBudget, Source: opts.MemorySource},
		NoTasks: opts.NothingAffected}
}

// persistentIDs are the ids of the persistent tasks among nodes.
func persistentIDs(nodes []*node) map[string]bool {
	ids := map[string]bool{}
	for _, n := range nodes {
		if n.task.Persistent {
			ids[n.task.ID] = true
		}
	}
	return ids
}

// openStore opens the run's checkout state folder and the shared store. The index survives a
// cancelled run: its writes are not tied to the run's context.
func openStore(ctx context.Context, opts Options) (*store.Store, error) {
	region := profilerec.Start(ctx, "open index")
	defer region.End()
	ws := opts.Workspace
	st, err := store.Open(context.WithoutCancel(ctx), ws.CacheDir, store.Options{ResetOtherVersion: true, Now: opts.Now,
		SharedDir: ws.SharedDir, Checkout: ws.Root})
	if err != nil {
		return nil, fmt.Errorf("open the state folder: %w", err)
	}
	return st, nil
}

// noteStore tells notice what opening the store reset or carried into the shared store.
func noteStore(st *store.Store, notice func(string)) {
	if notice == nil {
		return
	}
	if st.Reset != "" {
		notice(fmt.Sprintf("reset %s: it held %s", store.IndexPath(st.Dir()), st.Reset))
	}
	if st.Migrated != "" {
		notice(st.Migrated)
	}
}
