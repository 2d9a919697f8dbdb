// Command vx is a monorepo task runner: it runs each project's tasks in dependency order, caches
// their outputs and logs by a content hash of their inputs, keeps a history of every run, and serves
// all of that to coding agents over the Model Context Protocol (`vx mcp`).
package main

import (
	"context"
	"os"
)

func main() { os.Exit(main1()) }

// main1 runs vx with the process's arguments and environment and returns the exit status.
func main1() int {
	if isSupervise(os.Args) {
		supervise(os.Args[2:]) // ends the process
	}
	if isEvalConfig(os.Args) {
		evalConfig() // ends the process
	}
	guardFromTasks()
	defer startProfile(os.Getenv)()
	ctx, stop := withSignals(context.Background())
	defer stop()
	a := newApp(os.Stdout, os.Stderr, os.Getenv)
	if isAwaitRun(os.Args) {
		return a.awaitRun(ctx, os.Args[2])
	}
	return a.execute(ctx, os.Args[1:])
}
