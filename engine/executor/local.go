package executor

import (
	"context"
	"errors"
	"io"

	"github.com/vzn/vx/engine/counters"
	"github.com/vzn/vx/proc"
)

// Local runs a task's command as a child process on this machine, in its own process group
// under proc's supervision, with no descriptor but stdin (/dev/null, or Task.Stdin), stdout and
// stderr (both Task.Output). Its outputs stay where the command wrote them, in Task.Dir.
type Local struct {
	// Exec starts one child and waits for it; nil means proc.Run.
	Exec ExecFunc
}

// Run prepares the process (Task.Confine), starts it under Task.Timeout, and, once it passed,
// asks Task.CheckInputs.
func (l Local) Run(ctx context.Context, t Task) (Result, error) {
	// One writer for both streams: proc then reads them through one pipe, in order.
	var out io.Writer = t.Output
	spec := proc.Spec{Shell: t.Command, Dir: t.Dir, Env: t.Env, Stdout: out, Stderr: out, Grace: t.Grace, Stdin: t.Stdin, Foreground: t.Stdin != nil}
	if t.Confine != nil {
		if err := t.Confine(&spec); err != nil {
			return Result{ExitCode: -1}, err
		}
	}
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if t.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, t.Timeout)
	}
	defer cancel()
	exec := l.Exec
	if exec == nil {
		exec = proc.Run
	}
	if t.Started != nil {
		t.Started()
	}
	counters.From(ctx).Spawn()
	pr, err := exec(runCtx, spec)
	res := Result{ExitCode: pr.ExitCode, Signal: pr.Signal, Cancelled: pr.Cancelled, OutputsDir: t.Dir, Log: t.Output.Log(),
		Usage: Usage{Wall: pr.Wall, UserCPU: pr.UserCPU, SysCPU: pr.SysCPU, PeakRSSBytes: pr.PeakRSSBytes}}
	res.TimedOut = pr.Cancelled && ctx.Err() == nil && errors.Is(runCtx.Err(), context.DeadlineExceeded)
	if err == nil && res.Passed() && t.CheckInputs != nil {
		res.Inputs.Checked = true
		res.Inputs.Changed, res.Inputs.Err = t.CheckInputs(ctx)
	}
	return res, err
}
