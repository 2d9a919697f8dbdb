package tools

import (
	"context"

	"github.com/vzn/vx/engine/info"
)

type getWorkspaceInfoArgs struct{}

// getWorkspaceInfo answers as `vx info --format json`.
func (e *Env) getWorkspaceInfo() Tool {
	return Tool{
		Name:         "getWorkspaceInfo",
		Title:        "Workspace info",
		Description:  "What is this workspace, and what will a run use? vx info --format json: versions, git status, projects and tasks (and configs that failed to load), plugins, worker count and memory budget with their sources, cache state, flaky tasks, sandbox verdict, lock.",
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
