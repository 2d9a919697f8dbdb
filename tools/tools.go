package tools

import (
	"context"
	"io"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/session"
	"github.com/vzn/vx/engine/workspace"
)

// Deps are the dependencies the tools of one server share: the session, which keeps what the
// server keeps between calls (the workspace loader, the watcher, the plan memo, the state folder's
// reader, the log pages, the child started ahead), where children's stray output goes, and vx's
// version.
type Deps struct {
	// Session is what the server keeps between calls; its Close is the server's.
	Session *session.Session
	// Stderr receives what must not reach the reply stream; nil discards it.
	Stderr io.Writer
	// Version is vx's version.
	Version string
}

// loader is the session's workspace loader; nil without a session.
func (d *Deps) loader() *workspace.Loader {
	if d.Session == nil {
		return nil
	}
	return d.Session.Loader()
}

// files answers the file state a call on ws plans with: the watcher's, else nil (a scan).
func (d *Deps) files(ctx context.Context, ws *graph.Workspace) filestate.Source {
	return d.Session.Files(ctx, ws)
}

func (d *Deps) getenv(k string) string { return d.Session.Getenv(k) }

// load evaluates the workspace for one call (the session's last one while none of its sources
// changed); a config that does not load refuses the call with the config's own error
// (file:line:col), and the server goes on.
func (d *Deps) load(ctx context.Context) (*graph.Workspace, error) {
	ws, err := d.Session.Load(ctx)
	if err != nil {
		return nil, &tool.Refusal{Msg: err.Error()}
	}
	return ws, nil
}

// All returns the registry of every vx tool over deps. Which tools are listed depends on the
// workspace at the time of the call: runTasks is hidden under mcp({ run: false }), and
// mcp({ tools }) lists only the tools it names.
func All(deps *Deps) *tool.Registry {
	// Built on the first tools/list or tools/call: initialize is answered before.
	return tool.Lazy(func() []tool.Tool {
		return withListing([]tool.Tool{
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
		})
	}).WithLister(deps.listed).WithBudget(deps.budget)
}

// lister hides runTasks where the workspace's mcp({ run: false }) says nothing may run. A config
// that does not load hides nothing: each tool then answers the config's error.
func (d *Deps) lister(ctx context.Context, all []tool.Tool) []tool.Tool {
	ws, err := d.loader().LoadConfig(ctx)
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
