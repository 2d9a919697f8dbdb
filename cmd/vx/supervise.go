package main

import (
	"context"
	"runtime"
	"syscall"

	"github.com/vzn/vx/engine/executor"
	"github.com/vzn/vx/proc"
	"github.com/vzn/vx/proc/sandbox"
)

// isSupervise reports whether vx was started as a task's supervisor: `vx __supervise …`.
func isSupervise(args []string) bool {
	return len(args) > 1 && args[1] == proc.SuperviseArg
}

// supervise is `vx __supervise [--sandbox POLICY] [--report-fd N] -- PROGRAM [ARGS…]`, the hidden
// helper vx starts as each task's supervisor (see proc.Supervisor) where the smaller vx-sandbox is
// not next to it: a child subreaper that runs the task's shell in a process group of its own, under
// the task's sandbox if it has one (proc/sandbox), and, when it exits, kills and reaps everything it
// left. main dispatches to it before cobra and before anything else of vx, so that it costs an exec
// of vx and no more.
//
// It ends the process, with syscall.Exit rather than os.Exit: a supervisor has nothing to flush,
// and a race-enabled vx (the tests') would otherwise sleep a second (GORACE's atexit_sleep_ms)
// at the end of every task.
func supervise(args []string) {
	syscall.Exit(sandbox.Main(args))
}

// taskSupervisor is the supervisor vx starts tasks under: vx-sandbox next to the vx executable
// (VX_SANDBOX_HELPER names another), else vx itself. /proc/self/exe is vx's binary even if its
// file was replaced since vx started; it answers to "vx" (main dispatches on its first argument; a
// test binary standing for vx dispatches on that name).
func taskSupervisor(getenv func(string) string) *proc.Supervisor {
	if p := sandbox.HelperFor(getenv("VX_SANDBOX_HELPER")); p != "" {
		return &proc.Supervisor{Path: p}
	}
	return &proc.Supervisor{Path: "/proc/self/exe", Name: "vx"}
}

// supervisedExec runs each task of a run under a supervisor of its own where the system has them
// (Linux); elsewhere the task's process group is all there is. A task the runner gave a supervisor
// of its own (a sandboxed one) keeps it.
func supervisedExec(sup *proc.Supervisor) executor.ExecFunc {
	if runtime.GOOS != "linux" {
		return proc.Run
	}
	return func(ctx context.Context, spec proc.Spec) (proc.Result, error) {
		if spec.Supervisor == nil {
			spec.Supervisor = sup
		}
		return proc.Run(ctx, spec)
	}
}
