package runner

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	pb "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"

	"github.com/vzn/vx/engine/executor"
	"github.com/vzn/vx/engine/executor/remoteexec"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/remote"
	"github.com/vzn/vx/engine/runout"
	"github.com/vzn/vx/engine/store"
)

// storeRemote brings a remote command's outputs into the workspace through the cache's checked
// restore, storing its entry where the task is cached, the run writes the cache and its inputs
// did not move since its key was made (verdict); outputs that cannot be brought back fail the
// task, with the reason in its log.
func (a *attempt) storeRemote(key string, log []byte, verdict executor.InputCheck) {
	r, t := a.r, a.t
	moved := a.inputsMoved(verdict)
	keep := t.Cache && r.writesCache() && !moved
	if keep && r.cache.KeepsRemote(t.ID) {
		a.storeKept(key, log)
		return
	}
	logBlob, err := r.cache.PutRemote(a.ctx, t, key, log, a.e.Duration, a.remoteOutputs, keep)
	if err != nil {
		msg := "vx: " + r.masker.String(err.Error())
		r.display.Replay(t.ID, []byte(msg+"\n"))
		a.e.Status = store.StatusFailed
		a.keepFailureLog(append(log, msg+"\n"...))
		return
	}
	switch {
	case keep:
		a.e.LogBlob, a.e.LogSource = logBlob, "cache"
	case moved:
		a.keepLog(append(log, "vx: not cached: "+a.e.NotCached+"\n"...), logUncached)
	}
}

// declaredEnv is the part of env (a task's whole environment) the task declares: the variables
// the workspace and the task name exactly, and its exec.env; what a remote executor sends.
func declaredEnv(ws *graph.Workspace, t *graph.Task, env []string) map[string]string {
	names := map[string]bool{}
	for _, n := range slices.Concat(ws.Env, t.Env) {
		if !strings.ContainsAny(n, "*!") {
			names[n] = true
		}
	}
	for n := range t.ExecEnv {
		names[n] = true
	}
	out := map[string]string{}
	for _, kv := range env {
		if name, v, ok := strings.Cut(kv, "="); ok && names[name] {
			out[name] = v
		}
	}
	return out
}

// The values of Options.RemoteExec.
const (
	RemoteExecOn  = "on"
	RemoteExecOff = "off"
)

// useRemoteExecution makes the run's executor a Chooser over the local one and a REAPI engine's
// when the run executes remotely (Options.RemoteExec, remote.execute, a task's exec.remote), and
// answers what ends its connection. An engine that cannot be set up runs the tasks locally, with
// one warning; so does one that cannot run them (the Chooser's fallback). The tasks that run
// remotely take remote slots (remote.capacity), not local workers (schedule.go's slots).
func (r *runState) useRemoteExecution() func() {
	ws, mode := r.opts.Workspace, r.opts.RemoteExec
	if mode == RemoteExecOff || mode != RemoteExecOn && !wantsRemote(ws) {
		return func() {}
	}
	cfg := ws.Remote
	if cfg == nil {
		cfg = &graph.RemoteExec{}
	}
	remoteRun, closeEngine, err := r.remoteEngine(cfg)
	if err != nil {
		r.warn("remote execution: " + err.Error() + "; running tasks locally for this run")
		return func() {}
	}
	r.remoteOn, r.remoteAll = true, mode == RemoteExecOn
	r.remoteCap = remoteCapacity(cfg.Capacity, r.opts.Concurrency)
	if ex, ok := remoteRun.(*remoteexec.Executor); ok {
		r.useCutoff(ex, r.remoteAll)
	}
	r.executor = &executor.Chooser{Local: localPool{ex: r.executor}, Remote: remoteRun, Warn: r.fallBack,
		UseRemote: func(t executor.Task) bool { return r.runsRemotely(t, r.remoteAll) }}
	return closeEngine
}

// remoteEngine answers the executor of the workspace's REAPI engine and what ends its
// connection (Options.remoteExecutor's, when set, instead).
func (r *runState) remoteEngine(cfg *graph.RemoteExec) (executor.Executor, func(), error) {
	if r.opts.remoteExecutor != nil {
		return r.opts.remoteExecutor(r.showStage), func() {}, nil
	}
	engine, err := dialEngine(r.opts.Workspace, r.opts.Getenv)
	if err != nil {
		return nil, nil, err
	}
	r.engine = engine
	ex := &remoteexec.Executor{Engine: engine, CAS: r.st.CAS(), Platform: cfg.Platform,
		Client: remoteexec.NewClient(engine.Conn(), engine.Instance(), engine.Metadata(), remoteCallTimeout),
		Path:   remoteCommandPath(cfg), Home: remoteHome, Updates: r.showStage}
	ex.Install = r.remoteInstaller(ex)
	return ex, engine.Close, nil
}

// remoteCapacityPerWorker is remote.capacity's default, per local worker: an engine runs many
// actions at once, and a task waiting on it costs this machine next to nothing.
const remoteCapacityPerWorker = 4

// remoteCapacity is how many tasks run remotely at once: remote.capacity, else
// remoteCapacityPerWorker per local worker.
func remoteCapacity(capacity, workers int) int {
	if capacity > 0 {
		return capacity
	}
	return remoteCapacityPerWorker * max(1, workers)
}

// fallBack is the Chooser's one warning that the engine cannot run the run's tasks: nothing
// runs remotely any more, and the remote tasks not started yet wait for local workers.
func (r *runState) fallBack(msg string) {
	r.remoteGone.Store(true)
	r.warn(msg)
}

// The explicit HOME of a remote command (part of its Action, as its PATH is: remoteCommandPath),
// and the bound of each call to the engine.
const (
	remoteHome        = "/tmp"
	remoteCallTimeout = 30 * time.Second
)

// warn says a one-line message to the user.
func (r *runState) warn(msg string) {
	if r.opts.Notice != nil {
		r.opts.Notice(msg)
	}
}

// wantsRemote reports whether the workspace sends any task to a remote executor.
func wantsRemote(ws *graph.Workspace) bool {
	if ws.Remote != nil && ws.Remote.Execute {
		return true
	}
	for _, p := range ws.Projects {
		for _, t := range p.Tasks {
			if t.RemoteExec != nil && *t.RemoteExec {
				return true
			}
		}
	}
	return false
}

// runsRemotely reports whether task t may run remotely: a task sent there (remoteTask) that runs
// under no sandbox, whose key's files are known and whose outputs are declared inside its
// project.
func (r *runState) runsRemotely(t executor.Task, on bool) bool {
	gt, ok := r.opts.Workspace.Task(t.ID)
	return ok && r.remoteTask(gt, on) && remoteexec.Remotable(t) == "" &&
		t.Sandbox == nil // a sandbox is enforced on this machine only
}

// remoteTask reports whether the run sends task t to the engine: a cacheable command that is not
// persistent nor interactive, does not opt out (exec.remote: false), and that opts in
// (exec.remote: true) or is sent by the run (on) or the workspace (remote.execute).
func (r *runState) remoteTask(t *graph.Task, on bool) bool {
	if t.Persistent || t.Interactive || t.IsGroup() || !t.Cache || t.RemoteExec != nil && !*t.RemoteExec {
		return false
	}
	ws := r.opts.Workspace
	return on || t.RemoteExec != nil || ws.Remote != nil && ws.Remote.Execute
}

// remotePlanned reports whether the scheduler puts task t in the remote pool, as it becomes
// ready: the engine is there, the run sends it (remoteTask), no sandbox holds it here, and its
// outputs are declared inside its project (the half of remoteexec.Remotable known before its
// key). runsRemotely asks the rest when it runs; a planned task that is not sent after all takes
// a local worker then (localPool).
func (r *runState) remotePlanned(t *graph.Task) bool {
	if !r.remoteOn || r.remoteGone.Load() || !r.remoteTask(t, r.remoteAll) || r.sandbox.Effective(t) != nil {
		return false
	}
	return remoteexec.Remotable(executor.Task{Outputs: t.Outputs, InputFiles: []string{}}) == ""
}

// dialEngine answers the connection to the workspace's REAPI engine: remote.executor, else the
// REAPI server of remoteCache (with its instance, headers and TLS).
func dialEngine(ws *graph.Workspace, getenv func(string) string) (*remote.REAPI, error) {
	cfg := ws.RemoteCache
	if ws.Remote != nil && ws.Remote.Executor != "" {
		c := graph.RemoteCache{}
		if cfg != nil {
			c = *cfg
		}
		c.URL, c.Protocol = ws.Remote.Executor, ""
		cfg = &c
		envGet := getenv
		getenv = func(name string) string {
			if name == remote.EnvURL {
				return "" // the executor named is the engine, whatever cache the variable names
			}
			return envGet(name)
		}
	}
	if cfg == nil {
		return nil, errors.New("no engine: set remote.executor or remoteCache.reapi")
	}
	s, err := remote.Resolve(cfg, getenv, "")
	if err != nil {
		return nil, err
	}
	return remote.DialREAPI(s)
}

// localWorker is a remote task's claim on a local worker, which it takes only when it runs its
// command locally after all: it asks the scheduler once (a step with a grant) and holds the
// worker until the task ends. Only the task's worker uses it.
type localWorker struct {
	n     *node
	steps chan<- step
	held  bool
}

type localWorkerKey struct{}

// withLocalWorker answers ctx carrying w, for localPool.
func withLocalWorker(ctx context.Context, w *localWorker) context.Context {
	return context.WithValue(ctx, localWorkerKey{}, w)
}

// take waits until the task holds a local worker; false when ctx ended first.
func (w *localWorker) take(ctx context.Context) bool {
	if w.held {
		return true
	}
	grant := make(chan struct{})
	w.steps <- step{n: w.n, grant: grant}
	select {
	case <-grant:
		w.held = true
		return true
	case <-ctx.Done():
		return false
	}
}

// localPool is the Chooser's local executor: a task that holds a remote slot (its ctx carries a
// localWorker) takes a local worker before its command runs here, so that a fallback never runs
// more commands on this machine than the run has workers.
type localPool struct {
	ex executor.Executor
}

// Run runs t on the local executor, once its worker is held.
func (l localPool) Run(ctx context.Context, t executor.Task) (executor.Result, error) {
	if w, ok := ctx.Value(localWorkerKey{}).(*localWorker); ok && !w.take(ctx) {
		return executor.Result{ExitCode: -1, Cancelled: true, Log: t.Output.Log()}, nil
	}
	return l.ex.Run(ctx, t)
}

// remoteInputs answers the files a remote command's input root reads from the workspace: those
// its key was made from, root-relative. The outputs of the tasks it depends on are grafted in by
// digest (graftedInputs). Nil when the key's files are not known here or a dependency's outputs
// are not (no entry): such a task runs locally.
func (a *attempt) remoteInputs() []string {
	if a.inputs == nil || !a.r.remoteOn {
		return nil
	}
	if _, ok := a.upstreamOutputs(); !ok {
		return nil
	}
	return a.inputs.Files()
}

// graftedInputs answers the outputs of the tasks a remote command depends on, by digest from
// their cache entries' listings (upstreamOutputs); nil where remoteInputs is.
func (a *attempt) graftedInputs() []executor.GraftedInput {
	if a.inputs == nil || !a.r.remoteOn {
		return nil
	}
	grafted, _ := a.upstreamOutputs()
	return grafted
}

// showStage shows a remote task's stage on the engine on the run's status line and in the
// run's events (MCP progress).
func (r *runState) showStage(taskID string, u remoteexec.Update) {
	var stage string
	switch u.Stage {
	case pb.ExecutionStage_QUEUED:
		stage = "queued"
	case pb.ExecutionStage_EXECUTING:
		stage = "executing"
	default:
		return
	}
	r.display.RemoteStage(taskID, stage)
	r.event(runout.StageEvent(taskID, stage))
}
