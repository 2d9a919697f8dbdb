package tools

import (
	"context"

	"github.com/vzn/vx/engine/info"
)

type getWorkspaceInfoArgs struct{}

// getWorkspaceInfo answers as `vx info --format json`.
func (e *Env) getWorkspaceInfo() Tool {
	return Tool{
		Name:  "getWorkspaceInfo",
		Title: "Workspace info",
		Description: "What is this workspace, and what will a run use? Answers versions, the git status, how many projects " +
			"and tasks (and the config files that did not load, with file:line:col), plugins and their seams, the worker " +
			"count and memory budget with their sources, the cache state, flaky tasks, the sandbox verdict and the config " +
			"lock. The same document as `vx info --format json`; it answers even when the config is broken.",
		InputSchema:  schema(map[string]any{}),
		OutputSchema: outputSchema("versions", "root", "projects", "tasks"),
		Annotations:  readOnly,
		Handler: func(ctx context.Context, call *Call) (any, error) {
			var args getWorkspaceInfoArgs
			if err := DecodeArgs(call.Args, &args); err != nil {
				return nil, err
			}
			return info.Answer(ctx, e.Loader, e.Version, 0, e.getenv)
		},
	}
}
