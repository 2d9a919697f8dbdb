package tools

import (
	"context"
	"io"
	"os"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/workspace"
)

// Env is what the tools share: the workspace loader (one per server, so an edited config is seen
// on the next call), the vx executable that runTasks starts, and where children's stray output goes.
type Env struct {
	Loader *workspace.Loader
	// Exe is the path of the running vx binary.
	Exe string
	// Getenv reads the server's environment; nil means os.Getenv.
	Getenv func(string) string
	// Environ is the server's environment as a list, which the `vx run` child of runTasks starts
	// from; nil means os.Environ().
	Environ []string
	// Stderr receives what must not reach the reply stream.
	Stderr io.Writer
	// Version is vx's version.
	Version string
}

func (e *Env) getenv(k string) string {
	if e.Getenv == nil {
		return os.Getenv(k)
	}
	return e.Getenv(k)
}

func (e *Env) environ() []string {
	if e.Environ == nil {
		return os.Environ()
	}
	return e.Environ
}

// load evaluates the workspace for one call; a config that does not load refuses the call with the
// config's own error (file:line:col), and the server goes on.
func (e *Env) load(ctx context.Context) (*graph.Workspace, error) {
	ws, err := e.Loader.Load(ctx)
	if err != nil {
		return nil, &Refusal{Msg: err.Error()}
	}
	return ws, nil
}

// All returns the registry of every vx tool over env. Which tools are listed depends on the
// workspace at the time of the call: runTasks is hidden under mcp({ run: false }).
func All(env *Env) *Registry {
	return NewRegistry(
		env.listTasks(),
		env.getCacheStats(),
		env.getRunHistory(),
		env.explainCacheKey(),
		env.whyDidThisRerun(),
		env.pruneCache(),
		env.planInit(),
		env.searchDocs(),
		env.checkLock(),
		env.getConfig(),
		env.getTaskLog(),
		env.getFailures(),
		env.runTasks(),
		env.planTasks(),
		env.getWorkspaceInfo(),
	).WithLister(env.lister)
}

// lister hides runTasks where the workspace's mcp({ run: false }) says nothing may run. A config
// that does not load hides nothing: each tool then answers the config's error.
func (e *Env) lister(ctx context.Context, all []Tool) []Tool {
	ws, err := e.Loader.Load(ctx)
	if err == nil && ws.MCP == nil {
		return nil
	}
	if err != nil || ws.MCP.CanRun() {
		return all
	}
	out := make([]Tool, 0, len(all))
	for _, t := range all {
		if t.Name != "runTasks" {
			out = append(out, t)
		}
	}
	return out
}
