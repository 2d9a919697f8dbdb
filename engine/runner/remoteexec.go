package runner

import (
	"context"
	"errors"
	"path"
	"slices"
	"strings"
	"time"

	pb "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"

	"github.com/vzn/vx/engine/executor"
	"github.com/vzn/vx/engine/executor/remoteexec"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/remote"
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
// one warning; so does one that cannot run them (the Chooser's fallback).
func (r *runState) useRemoteExecution() func() {
	ws, mode := r.opts.Workspace, r.opts.RemoteExec
	if mode == RemoteExecOff || mode != RemoteExecOn && !wantsRemote(ws) {
		return func() {}
	}
	engine, err := dialEngine(ws, r.opts.Getenv)
	if err != nil {
		r.warn("remote execution: " + err.Error() + "; running tasks locally for this run")
		return func() {}
	}
	cfg := ws.Remote
	if cfg == nil {
		cfg = &graph.RemoteExec{}
	}
	remoteEx := &remoteexec.Executor{Engine: engine, CAS: r.st.CAS(), Platform: cfg.Platform,
		Client: remoteexec.NewClient(engine.Conn(), engine.Instance(), engine.Metadata(), remoteCallTimeout),
		Path:   remotePath, Home: remoteHome, Updates: r.showStage}
	var remoteRun executor.Executor = remoteEx
	if cfg.Capacity > 0 {
		remoteRun = boundedExecutor{ex: remoteEx, slots: make(chan struct{}, cfg.Capacity)}
	}
	r.remoteOn = true
	r.executor = &executor.Chooser{Local: r.executor, Remote: remoteRun, Warn: r.warn,
		UseRemote: func(t executor.Task) bool { return r.runsRemotely(t, mode == RemoteExecOn) }}
	return engine.Close
}

// The explicit PATH and HOME of a remote command (both part of its Action, so of its key there).
const (
	remotePath        = "/usr/local/bin:/usr/bin:/bin"
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

// runsRemotely reports whether task t may run remotely: a cacheable task that is not persistent,
// does not opt out (exec.remote: false), runs under no sandbox, whose key's files are known and
// whose outputs are declared inside its project, and that opts in (exec.remote: true) or is sent by the run (on)
// or the workspace (remote.execute).
func (r *runState) runsRemotely(t executor.Task, on bool) bool {
	gt, ok := r.opts.Workspace.Task(t.ID)
	if !ok || gt.Persistent || !gt.Cache || gt.RemoteExec != nil && !*gt.RemoteExec || remoteexec.Remotable(t) != "" ||
		t.Sandbox != nil { // a sandbox is enforced on this machine only
		return false
	}
	ws := r.opts.Workspace
	return on || gt.RemoteExec != nil || ws.Remote != nil && ws.Remote.Execute
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

// boundedExecutor runs at most cap(slots) tasks at once on ex (remote.capacity).
type boundedExecutor struct {
	ex    executor.Executor
	slots chan struct{}
}

// Run waits for a slot (or ctx's end), then runs t on the executor.
func (b boundedExecutor) Run(ctx context.Context, t executor.Task) (executor.Result, error) {
	select {
	case b.slots <- struct{}{}:
	case <-ctx.Done():
		return executor.Result{ExitCode: -1, Cancelled: true, Log: t.Output.Log()}, nil
	}
	defer func() { <-b.slots }()
	return b.ex.Run(ctx, t)
}

// remoteInputs answers the files a remote command's input root is made of: those its key was made
// from and the outputs of every task it depends on (through their cache entries' listings), each
// once, root-relative. Nil when the key's files are not known here or a dependency's outputs are
// not (no entry): such a task runs locally.
func (a *attempt) remoteInputs() []string {
	if a.inputs == nil || !a.r.remoteOn {
		return nil
	}
	files := a.inputs.Files()
	seen := make(map[string]bool, len(files))
	for _, f := range files {
		seen[f] = true
	}
	visited := map[*node]bool{}
	var walk func(n *node) bool
	walk = func(n *node) bool {
		for _, d := range n.deps {
			if visited[d] {
				continue
			}
			visited[d] = true
			if d.key == "" {
				return false
			}
			e, found, err := a.r.st.Entry(context.WithoutCancel(a.ctx), d.key)
			if err != nil || !found {
				return false
			}
			for _, o := range e.Outputs {
				rel := path.Join(d.project.Dir, o.Path)
				if root, ok := strings.CutPrefix(o.Path, "//"); ok {
					rel = root
				}
				if !seen[rel] {
					seen[rel] = true
					files = append(files, rel)
				}
			}
			if !walk(d) {
				return false
			}
		}
		return true
	}
	if !walk(a.n) {
		return nil
	}
	return files
}

// showStage shows a remote task's stage on the engine on the run's status line.
func (r *runState) showStage(taskID string, u remoteexec.Update) {
	switch u.Stage {
	case pb.ExecutionStage_QUEUED:
		r.display.RemoteStage(taskID, "queued")
	case pb.ExecutionStage_EXECUTING:
		r.display.RemoteStage(taskID, "executing")
	}
}
