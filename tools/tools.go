package tools

import (
	"context"
	"io"
	"os"
	"sync"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/runner"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/workspace"
)

// Deps are the dependencies the tools of one server share: the workspace loader (one per server,
// so an edited config is seen on the next call), the process's environment and the vx executable
// that runTasks starts, where children's stray output goes, and vx's version.
type Deps struct {
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
	// Files answers the file state of the workspace as loaded for a call, from the server's
	// watcher; nil (or a nil answer) scans.
	Files func(ctx context.Context, ws *graph.Workspace) filestate.Source
	// FilesReady waits until Files answers the watcher's file state, its first look's files
	// hashed: nil then, else why it will not (no watcher, a limit too low) or ctx's error. nil
	// means Files never waits.
	FilesReady func(ctx context.Context) error
	// Memo keeps the server's last plan for the next planTasks (runner.Memo); nil for none.
	Memo *runner.Memo
	// Load loads the workspace for a call in place of Loader.Load (the server's watcher answers
	// the last one while none of its files changed); nil means Loader.Load.
	Load func(ctx context.Context) (*graph.Workspace, error)
	// Spare makes runTasks keep a `vx run` child started ahead of the next call (runChild), which
	// Close ends.
	Spare bool

	// stateMu guards state, the state folder's reader the history tools share (openState), and
	// stateDir, the folder it reads; Close closes it.
	stateMu  sync.Mutex
	state    *store.Reader
	stateDir string
	// pagedLogs is what the index said of the logs getTaskLog pages.
	pagedLogs pagedLogs
	// spares is the child kept for the next runTasks call.
	spares spares
}

// files answers the file state a call on ws plans with: the watcher's, else nil (a scan).
func (d *Deps) files(ctx context.Context, ws *graph.Workspace) filestate.Source {
	if d.Files == nil {
		return nil
	}
	return d.Files(ctx, ws)
}

func (d *Deps) getenv(k string) string {
	if d.Getenv == nil {
		return os.Getenv(k)
	}
	return d.Getenv(k)
}

func (d *Deps) environ() []string {
	if d.Environ == nil {
		return os.Environ()
	}
	return d.Environ
}

// load evaluates the workspace for one call; a config that does not load refuses the call with the
// config's own error (file:line:col), and the server goes on.
func (d *Deps) load(ctx context.Context) (*graph.Workspace, error) {
	load := d.Loader.Load
	if d.Load != nil {
		load = d.Load
	}
	ws, err := load(ctx)
	if err != nil {
		return nil, &tool.Refusal{Msg: err.Error()}
	}
	return ws, nil
}

// All returns the registry of every vx tool over deps. Which tools are listed depends on the
// workspace at the time of the call: runTasks is hidden under mcp({ run: false }).
func All(deps *Deps) *tool.Registry {
	// Built on the first tools/list or tools/call: initialize is answered before.
	return tool.Lazy(func() []tool.Tool {
		return []tool.Tool{
			deps.listTasks(),
			deps.getCacheStats(),
			deps.getRunHistory(),
			deps.explainCacheKey(),
			deps.whyDidThisRerun(),
			deps.pruneCache(),
			deps.planInit(),
			deps.searchDocs(),
			deps.checkLock(),
			deps.getConfig(),
			deps.getTaskLog(),
			deps.getFailures(),
			deps.runTasks(),
			deps.planTasks(),
			deps.getWorkspaceInfo(),
		}
	}).WithLister(deps.lister).WithBudget(deps.budget)
}

// lister hides runTasks where the workspace's mcp({ run: false }) says nothing may run. A config
// that does not load hides nothing: each tool then answers the config's error.
func (d *Deps) lister(ctx context.Context, all []tool.Tool) []tool.Tool {
	ws, err := d.Loader.LoadConfig(ctx)
	if err == nil && ws.MCP == nil {
		return nil
	}
	if err != nil || ws.MCP.CanRun() {
		return all
	}
	out := make([]tool.Tool, 0, len(all))
	for _, t := range all {
		if t.Name != "runTasks" {
			out = append(out, t)
		}
	}
	return out
}
