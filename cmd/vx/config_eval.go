package main

import (
	"context"
	"os"
	"runtime"
	"syscall"

	"github.com/vzn/vx/engine/workspace"
)

// isEvalConfig reports whether vx was started as the config evaluation child of another vx.
func isEvalConfig(args []string) bool {
	return len(args) == 2 && args[1] == workspace.EvalConfigArg
}

// evalConfig is `vx __eval-config`, the hidden child every vx starts to evaluate a workspace's
// config where its bounds hold (see workspace.Isolation): its request on stdin, its answer on
// stdout, what the config prints on fd 3, its step marks on fd 4. main dispatches to it before
// anything else of vx. It ends the process with syscall.Exit: it has nothing left to flush, and a
// race-enabled vx (the tests') would otherwise sleep a second at the end of every evaluation.
func evalConfig() {
	console := os.NewFile(3, "console")
	steps := os.NewFile(4, "steps")
	syscall.Exit(workspace.ServeEval(context.Background(), os.Stdin, os.Stdout, console, steps))
}

// configIsolation is how vx starts its config evaluation child: /proc/self/exe is vx's binary
// even if its file was replaced since vx started, and it answers to "vx" (a test binary standing
// for vx dispatches on that name); elsewhere the executable's path.
func configIsolation() *workspace.Isolation {
	if runtime.GOOS == "linux" {
		return &workspace.Isolation{Path: "/proc/self/exe", Name: "vx"}
	}
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return &workspace.Isolation{Path: exe, Name: "vx"}
}
