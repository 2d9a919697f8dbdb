package main

import (
	"context"
	"runtime"
	"syscall"

	"github.com/vzn/vx/engine/runner"
	"github.com/vzn/vx/proc"
)

// isSupervise reports whether vx was started as a task's supervisor: `vx __supervise …`.
func isSupervise(args []string) bool {
	return len(args) > 1 && args[1] == proc.SuperviseArg
}

// supervise is `vx __supervise [--report-fd N] -- PROGRAM [ARGS…]`, the hidden helper vx starts as
// each task's supervisor (see proc.Supervisor): a child subreaper that runs the task's shell in a
// process group of its own and, when it exits, kills and reaps everything it left. main dispatches
// to it before cobra and before anything else of vx, so that it costs an exec of vx and no more.
//
// It is the last of vx to run before a task's command is executed, where a sandbox (Landlock,
// namespaces) is to be applied.
//
// It ends the process, with syscall.Exit rather than os.Exit: a supervisor has nothing to flush,
// and a race-enabled vx (the tests') would otherwise sleep a second (GORACE's atexit_sleep_ms)
// at the end of every task.
func supervise(args []string) {
	syscall.Exit(proc.Supervise(args))
}

// supervisedExec runs each task of a run under a supervisor of its own where the system has them
// (Linux); elsewhere the task's process group is all there is.
func supervisedExec() runner.ExecFunc {
	if runtime.GOOS != "linux" {
		return proc.Run
	}
	// vx itself: /proc/self/exe is vx's binary even if its file was replaced since vx started. It
	// answers to "vx" (main dispatches on its first argument; a test binary standing for vx
	// dispatches on that name).
	sup := &proc.Supervisor{Path: "/proc/self/exe", Name: "vx"}
	return func(ctx context.Context, spec proc.Spec) (proc.Result, error) {
		spec.Supervisor = sup
		return proc.Run(ctx, spec)
	}
}
