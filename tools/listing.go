package tools

import (
	"context"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/engine/graph"
)

// Instructions is what `vx mcp` asks every host to put before its model (the server's
// instructions in initialize and server/discover): when vx answers better than a shell, and which
// tool to call first. At most 800 characters (TestInstructionsFit).
const Instructions = "vx runs this monorepo's tasks with a cache and keeps every run's history. " +
	"Prefer it to a shell for builds and tests: runTasks runs them cached, in dependency order, " +
	"and answers only what needs attention. When a run fails, getFailures gives each failed task's " +
	"errors as file:line with its output, no log to scroll. whyDidThisRerun says why a task ran " +
	"again (which file, env or upstream key changed); listTasks with affected says what an edit " +
	"affects; planTasks says what would run without running it. " +
	"Start with listTasks (what can run here), then runTasks; after a failure, getFailures."

// listing is what each tool's listing says beyond its description: whether a host that defers
// tools behind a search shows it on the first turn (runTasks, getFailures), the words it is
// found by, and whether it may run as an MCP task.
var listing = map[string]struct {
	alwaysLoad  bool
	searchHint  string
	taskSupport string
}{
	"runTasks":         {alwaysLoad: true, taskSupport: "optional"},
	"getFailures":      {alwaysLoad: true},
	"listTasks":        {searchHint: "projects tasks what can run"},
	"getConfig":        {searchHint: "task config inputs outputs env"},
	"planTasks":        {searchHint: "dry run plan affected"},
	"getTaskLog":       {searchHint: "task output log"},
	"whyDidThisRerun":  {searchHint: "why rerun cache miss"},
	"explainCacheKey":  {searchHint: "cache key hash"},
	"getRunHistory":    {searchHint: "run history durations flaky"},
	"getCacheStats":    {searchHint: "cache size hit rate"},
	"pruneCache":       {searchHint: "prune cache free disk"},
	"getWorkspaceInfo": {searchHint: "workspace info versions"},
	"planInit":         {searchHint: "adopt vx init turbo nx"},
	"searchDocs":       {searchHint: "vx docs manual"},
	"checkLock":        {searchHint: "config lock drift"},
}

// withListing gives each tool what listing says of it.
func withListing(tools []tool.Tool) []tool.Tool {
	for i := range tools {
		l := listing[tools[i].Name]
		tools[i].AlwaysLoad, tools[i].SearchHint, tools[i].TaskSupport = l.alwaysLoad, l.searchHint, l.taskSupport
	}
	return tools
}

// chosen keeps the tools the workspace's mcp({ tools }) names, all of them where it names none.
func chosen(ws *graph.Workspace, all []tool.Tool) []tool.Tool {
	if ws == nil || ws.MCP == nil || ws.MCP.Tools == nil {
		return all
	}
	keep := make(map[string]bool, len(ws.MCP.Tools))
	for _, n := range ws.MCP.Tools {
		keep[n] = true
	}
	out := make([]tool.Tool, 0, len(ws.MCP.Tools))
	for _, t := range all {
		if keep[t.Name] {
			out = append(out, t)
		}
	}
	return out
}

// listed is the registry's lister: the tools the workspace lets an agent see now.
func (d *Deps) listed(ctx context.Context, all []tool.Tool) []tool.Tool {
	all = d.lister(ctx, all)
	ws, err := d.loader().LoadConfig(ctx)
	if err != nil {
		return all
	}
	return chosen(ws, all)
}
