package tools

import (
	"context"

	"github.com/vzn/vx/engine/show"
)

type getConfigArgs struct {
	Target   string     `json:"target" args:"nonempty"`
	Filter   FilterList `json:"filter"`
	Affected *Affected  `json:"affected"`
}

// getConfig answers as `vx show <target> --format json`.
func (e *Env) getConfig() Tool {
	return Tool{
		Name:        "getConfig",
		Title:       "Resolved config of a project or task",
		Description: "What does this task declare? vx show --format json: the resolved inputs, outputs, env, sandbox, dependsOn, scripts and where each value was set, secrets masked. target: a project, project#task or a task name.",
		InputSchema: schema(map[string]any{
			"target":   map[string]any{"type": "string", "minLength": 1, "description": "A project name, a project#task id, or a task name; leave out for the whole workspace."},
			"filter":   filterListSchema,
			"affected": affectedSchema,
		}),
		OutputSchema: outputSchema("root", "target", "projects"),
		Annotations:  readOnly,
		Handler: func(ctx context.Context, call *Call) (any, error) {
			var args getConfigArgs
			if err := DecodeArgs(call.Args, &args); err != nil {
				return nil, err
			}
			ws, err := e.load(ctx)
			if err != nil {
				return nil, err
			}
			return show.Show(ctx, ws, show.Options{Target: args.Target, Select: selectOptions(args.Filter, args.Affected)})
		},
	}
}
