package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/vzn/vx/engine/cache"
	"github.com/vzn/vx/engine/executor"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/pkgscript"
	"github.com/vzn/vx/engine/profilerec"
	"github.com/vzn/vx/engine/runout"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
	"github.com/vzn/vx/engine/taskenv"
	"github.com/vzn/vx/engine/taskmutex"
)

// attempt is one task's execution on its worker, from its key to its outcome: e is its row as it
// is made, o what the worker answers.
type attempt struct {
	r      *runState
	ctx    context.Context
	n      *node
	t      *graph.Task
	p      *graph.Project
	report func(step)
	start  time.Time
	e      store.Execution
	o      outcome
	// lockEnd is when the task's lock was taken after a wait, cmdStart when its command started.
	lockEnd, cmdStart time.Time
	// inputs is what the key was made from (hasher.Recheck compares it after the command ran);
	// nil until the key is made here.
	inputs *hasher.InputStats
	// gate is a persistent task's readiness gate (ready.go); nil without readyWhen.
	gate *readyGate
	// ranOn is where the last attempt's command ran (executor.ExecutorLocal or
	// ExecutorRemote, "" when no Chooser ran it); remoteOutputs are what it made remotely.
	ranOn         string
	remoteOutputs []executor.RemoteOutput
	// upstream is what upstreamOutputs answered, once asked.
	upstream *upstreamInputs
}

// execute runs one task (or restores it from the cache) and answers its outcome; report tells the
// scheduler of its phase as it changes. It never fails: whatever goes wrong becomes the task's
// status and log. The task's lock is held from before its cache lookup until its outputs are
// stored: a task another process runs is waited for, then looked up again.
func (r *runState) execute(ctx context.Context, n *node, depKeys map[string]string, report func(step)) outcome {
	t, p := n.task, n.project
	a := &attempt{r: r, ctx: ctx, n: n, t: t, p: p, report: report, start: r.opts.Now()}
	a.o.n, a.o.timing.started = n, a.start
	a.e = store.Execution{RunID: r.runID, TaskID: t.ID, Project: t.Project, Task: t.Name, Ord: n.index, Started: a.start}
	if err := ctx.Err(); err != nil {
		return a.fail(store.StatusSkipped, "")
	}
	if t.IsGroup() {
		return a.group(depKeys)
	}
	var ok bool
	key, handed := r.handed.key(t.ID, depKeys)
	if handed {
		a.e.Hash, a.o.key = key, key
	} else if key, ok = a.key(depKeys); !ok {
		return a.o
	}
	lock, ok := a.lock()
	if !ok {
		return a.o
	}
	defer lock.Unlock()
	if t.Cache && r.readsCache() {
		if hit, ok := a.lookup(key); ok {
			if handed && hit.Source == summary.CacheSourceRemote {
				a.handedManifest(key, depKeys)
			}
			return a.hit(key, hit)
		}
	}
	if handed {
		// A task that runs records its manifest, made from its files: the handed key stands only
		// if it is that manifest's.
		handedKey := key
		if key, ok = a.key(depKeys); !ok {
			return a.o
		}
		if key != handedKey {
			a.wrongKey(key, handedKey)
			if t.Cache && r.readsCache() {
				if hit, ok := a.lookup(key); ok {
					return a.hit(key, hit)
				}
			}
		}
	}
	if r.opts.RestoreOnly[t.ID] {
		return a.fail(store.StatusFailed, fmt.Sprintf("vx: %s has no cache entry for its key %s, and --exclude-dependencies restores the dependencies, never runs them\n", t.ID, key))
	}
	// The task runs, once this process holds its key (unless another process stored it first).
	keyLock, done := a.claim(key)
	if done {
		return a.o
	}
	defer keyLock.Unlock()
	// The task runs: what it writes may be a later task's input.
	a.wrote()
	if t.Persistent {
		return a.serve(key) // its dependents start beside it, once it is ready
	}
	return a.run(key)
}

// fail ends the attempt with status, msg (when not empty) as its log.
func (a *attempt) fail(status store.Status, msg string) outcome {
	a.e.Status = status
	a.e.Duration = a.r.opts.Now().Sub(a.start)
	a.o.timing.measuredFrom = a.start
	if msg != "" {
		log := []byte(a.r.masker.String(msg))
		a.r.display.Replay(a.t.ID, log)
		a.keepFailureLog(log)
	}
	a.o.exec = a.e
	return a.o
}

// key computes the task's cache key from its manifest, or takes the one made ahead of its start
// (ahead.go); false when the attempt ended there.
func (a *attempt) key(depKeys map[string]string) (string, bool) {
	made, ok := a.r.ahead.take(a.ctx, a.n, depKeys)
	if !ok {
		var err error
		if made, err = a.r.makeKey(a.ctx, a.p, a.t, depKeys, false); err != nil {
			if a.ctx.Err() != nil {
				a.fail(store.StatusCancelled, "")
			} else {
				a.fail(store.StatusFailed, fmt.Sprintf("vx: %v\n", err))
			}
			return "", false
		}
	}
	a.r.ahead.keyed(a.n, made.key)
	a.e.Hash, a.o.key, a.o.manifest = made.key, made.key, made.data
	a.inputs = made.inputs
	return made.key, true
}

// handedManifest makes the manifest of a remote hit under a handed key, which the index records
// (the entry was made elsewhere, so vx why can diff it), from the task's files; a key that is not
// the handed one stops the taking of keys, and no manifest is recorded.
func (a *attempt) handedManifest(key string, depKeys map[string]string) {
	m, err := a.r.hasher.Manifest(a.ctx, a.p, a.t, depKeys)
	if err != nil {
		return
	}
	m.Sandbox = a.r.sandbox.Effective(a.t)
	made, data, err := m.Key()
	switch {
	case err != nil:
	case made == key:
		a.o.manifest = data
	default:
		a.wrongKey(made, key)
	}
}

// wrongKey stops the taking of keys after the task's files made another key than the handed one,
// and says so the first time.
func (a *attempt) wrongKey(made, handed string) {
	if a.r.handed.wrong() {
		a.r.display.Notice(a.t.ID, fmt.Sprintf("vx: the key vx mcp handed over for %s is not its files' (%s, not %s): this run hashes every task from here",
			a.t.ID, shortKey(made), shortKey(handed)))
	}
}

// lock takes the task's lock, waiting (lockWait) while another process holds it, for at most the
// task's timeout; false when the attempt ended there. A persistent task another process runs is
// skipped at once: it is that process's server.
func (a *attempt) lock() (*taskmutex.Lock, bool) {
	lk, err := a.r.locks.TryLock(a.t.ID)
	var held *taskmutex.HeldError
	if !errors.As(err, &held) {
		if err != nil {
			a.fail(store.StatusFailed, fmt.Sprintf("vx: %v\n", err))
			return nil, false
		}
		return lk, true
	}
	if a.t.Persistent {
		a.o.elsewhere = true
		a.fail(store.StatusSkipped, fmt.Sprintf("vx: %s: not started again\n", held))
		return nil, false
	}
	a.report(step{n: a.n, to: lockWait, holder: held.Holder()})
	waitCtx, cancel := a.ctx, context.CancelFunc(func() {})
	if a.t.Timeout > 0 {
		waitCtx, cancel = context.WithTimeout(a.ctx, a.t.Timeout)
	}
	defer cancel()
	began := a.r.opts.Now()
	lk, err = a.r.locks.Lock(waitCtx, a.t.ID, nil)
	a.lockEnd = a.r.opts.Now()
	a.o.waited = a.lockEnd.Sub(began)
	profilerec.Record(a.ctx, "lock wait", began, a.lockEnd)
	switch {
	case err == nil:
		a.report(step{n: a.n, to: running})
		return lk, true
	case a.ctx.Err() != nil:
		a.fail(store.StatusCancelled, "")
	case errors.Is(err, context.DeadlineExceeded):
		a.fail(store.StatusFailed, fmt.Sprintf("vx: %s: gave up after waiting %s (its timeout) for %s, which runs it\n",
			a.t.ID, a.t.Timeout, held.Holder()))
	default:
		a.fail(store.StatusFailed, fmt.Sprintf("vx: %v\n", err))
	}
	return nil, false
}

// lookup asks the cache for the task's key (locally, then remotely) and restores a hit's outputs.
func (a *attempt) lookup(key string) (cache.Hit, bool) {
	return a.lookupIn(key, a.r.cache.Get)
}

// lookupIn is lookup through get: the cache's Get, or its GetLocal.
func (a *attempt) lookupIn(key string, get func(context.Context, *graph.Task, string) (cache.Hit, bool, error)) (cache.Hit, bool) {
	hit, ok, err := get(a.ctx, a.t, key)
	if hit.Changed {
		// Files of the project were written or removed: hash them (no handed key stands for
		// them), and let later tasks see them in the project's listing: a restore that ended
		// leaves exactly the entry's files under the task's outputs, which the hasher adds to
		// the listing where git shows them; one that did not is listed again.
		a.wrote()
		if ok {
			a.r.hasher.Restored(a.ctx, a.p, a.t, entryPaths(hit.Entry.Outputs))
		} else {
			a.r.hasher.Wrote(a.p, a.t)
		}
	}
	if err != nil {
		a.r.display.Notice(a.t.ID, fmt.Sprintf("vx: cache: %v", err))
	}
	return hit, ok
}

// entryPaths answers the paths a cache entry lists, as it lists them (relative to the project
// folder; "//"-prefixed from the root).
func entryPaths(files []store.OutputFile) []string {
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Path
	}
	return paths
}

// hit ends the attempt with the cache entry restored.
func (a *attempt) hit(key string, hit cache.Hit) outcome {
	e := &a.e
	e.Status = store.StatusHit
	e.CacheSource = hit.Source
	e.ExitCode = intPtr(0)
	e.Saved, e.RestoredFiles = hit.Entry.Duration, intPtr(hit.Files)
	e.OutputsRemote = hit.OutputsRemote
	e.LogBlob, e.LogSource = hit.Entry.LogBlob, "cache"
	// A hit takes what its restore took; the time it waited for another run is waitedMs.
	e.Duration = a.r.opts.Now().Sub(a.start) - a.o.waited
	a.o.timing.measuredFrom = a.start
	if a.o.waited > 0 {
		a.o.timing.measuredFrom = a.lockEnd // the wait is not the task's time
	}
	a.o.exec, a.o.replay = a.e, hit.Log
	if hit.Touch {
		a.o.touched = key
	}
	return a.o
}

// run runs the task's command (a miss) through the run's executor, again after a failure as
// many times as its retries allow (every attempt's output in its log), then stores its outputs
// and log; unless its Action's result is found by the Action digest first (cutoff).
func (a *attempt) run(key string) outcome {
	if o, ok := a.cutoff(key); ok {
		return o // its Action's result, found by the Action digest
	}
	r, t, p := a.r, a.t, a.p
	a.e.Forced = r.opts.Force && t.Cache
	retries := r.retries(t)
	var earlier []byte // the logs of the attempts that failed, each with vx's line after it
	var log []byte
	var inputs executor.InputCheck
	for {
		var refusal string
		log, inputs, refusal = a.runOnce()
		if refusal != "" {
			return a.fail(store.StatusFailed, refusal)
		}
		if a.e.FailedAttempts >= retries || !store.Failed(a.e.Status) || a.ctx.Err() != nil {
			break
		}
		a.e.FailedAttempts++
		msg := fmt.Sprintf("vx: %s %s (attempt %d of %d): running it again\n", t.ID, attemptVerdict(a.e), a.e.FailedAttempts, retries+1)
		// With the task's output, so that a fold or a held log shows it between the attempts.
		r.display.Replay(t.ID, []byte(msg))
		earlier = append(append(earlier, log...), msg...)
	}
	log = append(earlier, log...)
	r.undeclared.Note(p, t, a.e.Duration, a.e.Status)
	switch a.e.Status {
	case store.StatusMiss:
		a.store(key, log, inputs)
	case store.StatusFailed, store.StatusTimedOut, store.StatusCancelled:
		a.keepFailureLog(log)
	}
	a.o.exec = a.e
	return a.o
}

// runOnce runs the task's command once and sets the row from its result; it answers the log of
// the attempt and the executor's check of the inputs after it, or the refusal that kept the
// command from starting.
func (a *attempt) runOnce() (log []byte, inputs executor.InputCheck, refusal string) {
	r := a.r
	a.e.ExitCode, a.e.TimedOut, a.e.SandboxViolations = nil, false, nil
	var box *taskenv.Box
	res, runErr := r.executor.Run(a.ctx, a.command(&box))
	var refused *executor.Refusal
	if errors.As(runErr, &refused) {
		return nil, inputs, refused.Message
	}
	a.commandSpan(res)
	a.ranOn, a.remoteOutputs = res.Executor, res.RemoteOutputs
	a.e.Executor = res.Executor
	// Files of the project may have changed: list them again for later tasks.
	r.hasher.Wrote(a.p, a.t)
	log = a.gateVerdict(a.judge(res, runErr, r.masker.Bytes(res.Log)))
	return a.confine(box, res.Log, log), res.Inputs, ""
}

// attemptVerdict says how an attempt that failed ended, for the line before the next.
func attemptVerdict(e store.Execution) string {
	switch {
	case e.TimedOut:
		return "timed out"
	case e.ExitCode != nil:
		return fmt.Sprintf("failed with exit code %d", *e.ExitCode)
	}
	return "failed"
}

// retries is how many times a failed command of t is run again: vx run --retry, else its
// exec.retries; a persistent task (a server) is never run again.
func (r *runState) retries(t *graph.Task) int {
	switch {
	case t.Persistent:
		return 0
	case r.opts.Retry != nil:
		return *r.opts.Retry
	}
	return t.Retries
}

// store stores the outputs and log of a task that passed under key, when it is cached and its
// outputs are fit to be restored; otherwise its log is kept with the reason (vx last --log,
// getTaskLog), never as a cache entry. verdict is the executor's check of its inputs.
func (a *attempt) store(key string, log []byte, verdict executor.InputCheck) {
	r, t := a.r, a.t
	if a.ranOn == executor.ExecutorRemote {
		a.storeRemote(key, log, verdict)
		return
	}
	// Checked for a task that is not cached too: what depends on it holds its key.
	if a.inputsMoved(verdict) {
		if t.Cache {
			a.keepLog(append(log, "vx: not cached: "+a.e.NotCached+"\n"...), logUncached)
		} else {
			a.keepFailureLog(log)
		}
		return
	}
	if !t.Cache || !r.writesCache() {
		return
	}
	logBlob, err := r.cache.Put(a.ctx, t, key, log, a.e.Duration)
	if err != nil {
		a.e.NotCached = r.masker.String(err.Error())
		msg := "vx: not cached: " + a.e.NotCached
		r.display.Notice(t.ID, msg)
		a.keepLog(append(log, msg+"\n"...), logUncached)
		return
	}
	a.e.LogBlob, a.e.LogSource = logBlob, "cache"
}

// command is the task's command as the executor runs it; box receives the sandbox the command
// was confined in on this machine.
func (a *attempt) command(box **taskenv.Box) executor.Task {
	r, t, p := a.r, a.t, a.p
	command, env := r.scriptCommand(p, t)
	output := a.output(taskLog{r.display.TaskWriter(t.ID)})
	var stdin io.Reader
	if t.Interactive {
		// It reads vx's stdin, and what it prints shows at once, a prompt with no newline too.
		stdin, output = r.opts.Stdin, promptLog{taskLog{r.display.TaskWriter(t.ID)}}
	}
	return executor.Task{
		ID: t.ID, Command: command, Dir: p.AbsDir, Root: r.opts.Workspace.Root, Env: env,
		Sandbox: r.sandbox.Effective(t), Inputs: t.Inputs, Outputs: t.Outputs, Timeout: t.Timeout, Grace: r.opts.Grace,
		Output: output,
		Confine: func(spec *executor.Spec) error {
			b, refusal := r.sandbox.Start(p, t, spec)
			if refusal != "" {
				return &executor.Refusal{Message: refusal}
			}
			*box = b
			return nil
		},
		Started: func() {
			// From its start the command may write anywhere: later keys ask the file system,
			// not the watcher's file state (which it leaves behind).
			r.hasher.Wrote(p, t)
			a.cmdStart = r.opts.Now()
			r.commands.Add(1)
		},
		CheckInputs: a.checkInputs,
		Stdin:       stdin,
		DeclaredEnv: declaredEnv(r.opts.Workspace, t, env),
		InputFiles:  a.remoteInputs(),
		Written:     t.Command,
		Grafted:     a.graftedInputs(),

		KeepOutputsRemote: a.keepsOutputsRemote(),
	}
}

// taskLog is a task's output on the display as the executor writes it and reads its log.
type taskLog struct{ *runout.TaskOutput }

// Log ends the task's output on the display and answers the log it kept.
func (l taskLog) Log() []byte {
	l.Flush()
	return l.TaskOutput.Log()
}

// promptLog is an interactive task's output: each write shows at once, ending a partial line (a
// prompt) rather than holding it until its newline.
type promptLog struct{ taskLog }

// Write shows p at once.
func (l promptLog) Write(p []byte) (int, error) {
	n, err := l.taskLog.Write(p)
	l.Flush()
	return n, err
}

// checkInputs answers the inputs of the task that moved since its key was made from them.
func (a *attempt) checkInputs(ctx context.Context) ([]string, error) {
	if a.inputs == nil {
		return nil, nil // a command runs only under a key made here (execute)
	}
	return a.r.hasher.Recheck(ctx, a.p, a.t, a.inputs)
}

// inputsMoved reports whether the outputs the command made are not what the key describes: an
// input the key was made from changed while the command ran (or could not be looked at again:
// verdict, the executor's, is that of checkInputs), or the task ran on the outputs of a task for
// which that holds (its key holds that task's). Such outputs are not cached, locally or remotely.
// It says which files moved, on the run's output and in the task's row of the summary.
func (a *attempt) inputsMoved(verdict executor.InputCheck) bool {
	if deps, files := a.r.inputsChanged.fromDeps(a.n); len(deps) > 0 {
		a.notCached(fmt.Sprintf("it ran on the outputs of %s, whose inputs changed while it ran (%s)",
			strings.Join(deps, ", "), nameFiles(files)))
		return true
	}
	if !verdict.Checked {
		verdict.Changed, verdict.Err = a.checkInputs(a.ctx)
	}
	switch {
	case verdict.Err != nil:
		a.r.inputsChanged.put(a.t.ID, a.p.Dir, nil)
		a.notCached(fmt.Sprintf("its inputs could not be checked after it ran: %v", verdict.Err))
		return true
	case len(verdict.Changed) == 0:
		return false
	}
	a.r.inputsChanged.put(a.t.ID, a.p.Dir, verdict.Changed)
	why := nameFiles(verdict.Changed) + " changed while it ran"
	if same := a.inputs.SameBytes(); len(same) > 0 {
		why += fmt.Sprintf(" (%s written again with the same bytes: if the task writes it itself, declare it in rewrites)", nameFiles(same))
	}
	a.notCached(why)
	return true
}

// notCached says why the task's outputs are not stored, on the run's output and in its row.
func (a *attempt) notCached(why string) {
	if a.t.Cache {
		a.e.NotCached = a.r.masker.String(why)
	}
	a.r.display.Notice(a.t.ID, fmt.Sprintf("vx: %s: not cached: %s", a.t.ID, why))
}

// nameFiles names files for a one-line message: the first few, and how many more.
func nameFiles(files []string) string {
	const shown = 5
	if len(files) <= shown {
		return strings.Join(files, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(files[:shown], ", "), len(files)-shown)
}

// keepFailureLog stores what a task that did not pass printed, for vx last --log and getFailures;
// a log that cannot be stored is said once, so that its absence later is explained.
func (a *attempt) keepFailureLog(log []byte) {
	a.keepLog(log, "failure")
}

// logUncached is the log source of a task that passed and stored no cache entry.
const logUncached = "uncached"

// keepLog stores what a task printed as its execution's log from source; a log that cannot be
// stored is said once, so that its absence later is explained.
func (a *attempt) keepLog(log []byte, source string) {
	h, err := a.r.st.CAS().Put(log)
	if err != nil {
		a.r.display.Notice(a.t.ID, fmt.Sprintf("vx: the log of %s could not be kept: %v", a.t.ID, err))
		return
	}
	a.e.LogBlob, a.e.LogSource = h, source
}

// judge sets the row from the command's result: its measures and its status. It answers the log,
// with vx's own message about the result added.
func (a *attempt) judge(res executor.Result, runErr error, log []byte) []byte {
	e := &a.e
	e.Duration, a.o.timing.measuredFrom = res.Usage.Wall, a.cmdStart
	if e.Duration == 0 {
		e.Duration, a.o.timing.measuredFrom = a.r.opts.Now().Sub(a.start), a.start
	}
	e.UserCPU, e.SysCPU, e.PeakRSSBytes = res.Usage.UserCPU, res.Usage.SysCPU, res.Usage.PeakRSSBytes
	if res.Signal == "" && runErr == nil {
		e.ExitCode = intPtr(res.ExitCode)
	}
	switch {
	case runErr != nil && !res.Cancelled:
		msg := a.r.masker.String(fmt.Sprintf("vx: %v\n", runErr))
		log = append(log, msg...)
		a.r.display.Replay(a.t.ID, []byte(msg))
		e.Status = store.StatusFailed
	case res.Cancelled && a.ctx.Err() != nil:
		e.Status = store.StatusCancelled
	case res.Cancelled && res.TimedOut:
		e.Status, e.TimedOut = store.StatusTimedOut, true
		msg := fmt.Sprintf("vx: %s timed out after %s\n", a.t.ID, a.t.Timeout)
		log = append(log, msg...)
		a.r.display.Replay(a.t.ID, []byte(msg))
	case res.ExitCode == 0 && res.Signal == "":
		e.Status = store.StatusMiss
	default:
		e.Status = store.StatusFailed
	}
	return log
}

// confine fails a task that reached outside its sandbox (it is never cached), naming what it did.
// raw is what the task printed; it answers the log.
func (a *attempt) confine(box *taskenv.Box, raw, log []byte) []byte {
	v := box.Finish(a.e.Status == store.StatusMiss, raw)
	if len(v) == 0 {
		return log
	}
	for i := range v {
		v[i] = a.r.masker.String(v[i])
	}
	a.e.SandboxViolations = v
	msg := fmt.Sprintf("vx: %s reached outside its sandbox:\n  %s\n", a.t.ID, strings.Join(v, "\n  "))
	log = append(log, msg...)
	a.r.display.Replay(a.t.ID, []byte(msg))
	if a.e.Status == store.StatusMiss {
		a.e.Status = store.StatusFailed
	}
	return log
}

// commandSpan marks the command's span for a profile: from its start for the wall time the
// process measured, the duration its row says (or until now, when it measured none).
func (a *attempt) commandSpan(res executor.Result) {
	if !profilerec.Enabled(a.ctx) {
		return
	}
	end := a.cmdStart.Add(res.Usage.Wall)
	if res.Usage.Wall == 0 {
		end = a.r.opts.Now()
	}
	profilerec.Record(a.ctx, "command", a.cmdStart, end)
}

func intPtr(i int) *int { return &i }

// taskEnv is the task's environment: what it declares (taskenv.Env), exec.env and secrets read
// now, and the marks of the run it belongs to (outerMarks).
func (r *runState) taskEnv(t *graph.Task) []string {
	return outerMarks(taskenv.Env(r.opts.Workspace, t, r.opts.Environ, r.opts.Getenv), t.ID, r.opts.Workspace.Root)
}

// scriptCommand is the command the task runs and its environment: where its command runs a
// package script that needs no package manager, the script's text as the manager would have run
// it (engine/pkgscript), else its command. Either way its key is its command's.
func (r *runState) scriptCommand(p *graph.Project, t *graph.Task) (string, []string) {
	env := r.taskEnv(t)
	if t.Scripts == nil {
		return t.Command, env // its command runs no package script
	}
	ws := r.opts.Workspace
	runner, _ := pkgscript.RunnerFor(ws.ScriptsRunner, r.opts.Getenv) // checked as the run began
	plan, why := pkgscript.Resolve(pkgscript.Task{Command: t.Command, Dir: p.AbsDir, Root: ws.Root, Env: env, Runner: runner})
	if why != "" {
		return t.Command, env
	}
	return plan.Shell, plan.Env
}
