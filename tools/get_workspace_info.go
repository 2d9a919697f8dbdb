package tools

import (
	"context"

	"github.com/vzn/vx/engine/info"
	"github.com/vzn/vx/tools/window"
)

type getWorkspaceInfoArgs struct {
	Cursor string `json:"cursor" args:"nonempty" jsonschema:"An answer's nextCursor."`
}

// getWorkspaceInfo answers as `vx info --format json`.
func (e *Env) getWorkspaceInfo() Tool {
	return Tool{
		Name:         "getWorkspaceInfo",
		Title:        "Workspace info",
		Description:  "What is this workspace, and what will a run use? vx info --format json: versions, git status, projects and tasks (and configs that failed to load), plugins, worker count and memory budget with their sources, cache state, flaky tasks, sandbox verdict, lock.",
		InputSchema:  inputOf[getWorkspaceInfoArgs](),
		OutputSchema: outputOf[info.Document](true),
		Annotations:  readOnly,
		Handler: func(ctx context.Context, call *Call) (any, error) {
			var args getWorkspaceInfoArgs
			if err := DecodeArgs(call.Args, &args); err != nil {
				return nil, err
			}
			doc, err := info.Answer(ctx, e.Loader, e.Version, 0, e.getenv)
			if err != nil {
				return nil, err
			}
			lists := []window.List{window.Of("configErrors", &doc.ConfigErrors)}
			if flaky, ok := doc.FlakyTasks.Value.(info.FlakyReport); ok {
				doc.FlakyTasks.Value = &flaky
				lists = append(lists, window.Of("flakyTasks.value.tasks", &flaky.Tasks))
			}
			return e.fit(ctx, call, "getWorkspaceInfo", args.Cursor, doc, lists...)
		},
	}
}
