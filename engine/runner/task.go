package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/proc"
)

// maxLogBytes bounds the log kept in memory and in the cache for one task; beyond it the middle
// of the output is dropped with a marker.
const maxLogBytes = 32 << 20

// execute runs one task (or restores it from the cache) and answers its outcome. It never fails:
// whatever goes wrong becomes the task's status and log.
func (r *runState) execute(ctx context.Context, n *node, depKeys map[string]string) outcome {
	t, p := n.task, n.project
	start := r.opts.Now()
	o := outcome{n: n}
	e := store.Execution{RunID: r.runID, TaskID: t.ID, Project: t.Project, Task: t.Name, Ord: n.index, Started: start}
	fail := func(status string, msg string) outcome {
		e.Status = status
		e.Duration = r.opts.Now().Sub(start)
		if msg != "" {
			log := []byte(r.masker.String(msg))
			r.display.replay(t.ID, log)
			if h, err := r.st.CAS().Put(log); err == nil {
				e.LogBlob, e.LogSource = h, "failure"
			}
		}
		o.exec = e
		return o
	}
	if err := ctx.Err(); err != nil {
		return fail(history.StatusSkipped, "")
	}

	m, err := r.hasher.Manifest(ctx, p, t, depKeys)
	if err != nil {
		if ctx.Err() != nil {
			return fail(history.StatusCancelled, "")
		}
		return fail(history.StatusFailed, fmt.Sprintf("vx: %v\n", err))
	}
	m.Sandbox = r.effectiveSandbox(t)
	key, data, err := m.Key()
	if err != nil {
		return fail(history.StatusFailed, fmt.Sprintf("vx: %v\n", err))
	}
	e.Hash, o.key, o.manifest = key, key, data

	if t.Cache && !r.opts.Force {
		if entry, source, logData, ok := r.lookup(ctx, p, t, key); ok {
			e.Status = history.StatusHit
			e.CacheSource = source
			e.ExitCode = intPtr(0)
			e.Saved, e.RestoredFiles = entry.Duration, intPtr(len(entry.Outputs))
			e.LogBlob, e.LogSource = entry.LogBlob, "cache"
			e.Duration = r.opts.Now().Sub(start)
			o.exec, o.replay = e, logData
			if r.opts.Now().Sub(entry.LastUsed) >= touchEvery {
				o.touched = key
			}
			return o
		}
	}

	if t.Persistent && r.keyed != nil {
		r.keyed <- keyed{n: n, key: key} // its dependents start beside it now
	}

	// A miss: run the command.
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if t.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, t.Timeout)
	}
	defer cancel()
	out := r.display.taskWriter(t.ID)
	spec := proc.Spec{
		Shell: t.Command, Dir: p.AbsDir, Env: r.taskEnv(t), Stdout: out, Stderr: out, Grace: r.opts.Grace,
	}
	box, refusal := r.startSandbox(p, t, &spec)
	if refusal != "" {
		return fail(history.StatusFailed, refusal)
	}
	res, runErr := r.opts.Exec(runCtx, spec)
	out.flush()
	// Files of the project may have changed: list them again for later tasks.
	r.hasher.Invalidate(p.Dir)
	e.Duration = res.Wall
	if e.Duration == 0 {
		e.Duration = r.opts.Now().Sub(start)
	}
	e.UserCPU, e.SysCPU, e.PeakRSSBytes = res.UserCPU, res.SysCPU, res.PeakRSSBytes
	if res.Signal == "" && runErr == nil {
		e.ExitCode = intPtr(res.ExitCode)
	}
	log := r.masker.Bytes(out.log())
	switch {
	case runErr != nil && !res.Cancelled:
		log = append(log, r.masker.String(fmt.Sprintf("vx: %v\n", runErr))...)
		r.display.replay(t.ID, []byte(r.masker.String(fmt.Sprintf("vx: %v\n", runErr))))
		e.Status = history.StatusFailed
	case res.Cancelled && ctx.Err() != nil:
		e.Status = history.StatusCancelled
	case res.Cancelled && errors.Is(runCtx.Err(), context.DeadlineExceeded):
		e.Status, e.TimedOut = history.StatusTimedOut, true
		msg := fmt.Sprintf("vx: %s timed out after %s\n", t.ID, t.Timeout)
		log = append(log, msg...)
		r.display.replay(t.ID, []byte(msg))
	case res.ExitCode == 0 && res.Signal == "":
		e.Status = history.StatusMiss
	default:
		e.Status = history.StatusFailed
	}

	if v := box.finish(e.Status == history.StatusMiss, out.log()); len(v) > 0 {
		// A task that reached outside its sandbox fails, and is never cached.
		for i := range v {
			v[i] = r.masker.String(v[i])
		}
		e.SandboxViolations = v
		msg := fmt.Sprintf("vx: %s reached outside its sandbox:\n  %s\n", t.ID, strings.Join(v, "\n  "))
		log = append(log, msg...)
		r.display.replay(t.ID, []byte(msg))
		if e.Status == history.StatusMiss {
			e.Status = history.StatusFailed
		}
	}

	r.warnUndeclared(ctx, p, t, e.Duration, e.Status)
	switch e.Status {
	case history.StatusMiss:
		if t.Cache {
			if logBlob, err := r.save(ctx, p, t, key, log, e.Duration); err != nil {
				r.display.notice(t.ID, fmt.Sprintf("vx: not cached: %v", err))
			} else {
				e.LogBlob, e.LogSource = logBlob, "cache"
			}
		}
	case history.StatusFailed, history.StatusTimedOut, history.StatusCancelled:
		if h, err := r.st.CAS().Put(log); err == nil {
			e.LogBlob, e.LogSource = h, "failure"
		}
	}
	o.exec = e
	return o
}

func intPtr(i int) *int { return &i }

// taskEnv is the task's environment: what it declares (TaskEnv), exec.env and secrets read now.
func (r *runState) taskEnv(t *graph.Task) []string {
	return TaskEnv(r.opts.Workspace, t, r.opts.Environ, r.opts.Getenv)
}

// save stores the task's outputs archive and log, then the cache entry naming them.
// It answers the log's blob.
func (r *runState) save(ctx context.Context, p *graph.Project, t *graph.Task, key string, log []byte, took time.Duration) (string, error) {
	dbctx := context.WithoutCancel(ctx)
	archive, files, err := r.archive(p, t)
	if err != nil {
		return "", err
	}
	var outputsBlob string
	size := int64(len(log))
	if archive != nil {
		if outputsBlob, err = r.st.CAS().Put(archive); err != nil {
			return "", err
		}
		size += int64(len(archive))
	}
	logBlob, err := r.st.CAS().Put(log)
	if err != nil {
		return "", err
	}
	now := r.opts.Now()
	entry := store.Entry{Hash: key, TaskID: t.ID, Project: t.Project, Command: t.Command,
		OutputsBlob: outputsBlob, Outputs: files, LogBlob: logBlob, Size: size, Duration: took,
		Created: now, LastUsed: now}
	if err := r.st.PutEntry(dbctx, entry); err != nil {
		return logBlob, err
	}
	r.upload(entry, int64(len(archive)), int64(len(log)))
	return logBlob, nil
}
