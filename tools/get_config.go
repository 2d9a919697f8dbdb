package tools

import (
	"context"

	"github.com/vzn/vx/engine/show"
	"github.com/vzn/vx/tools/window"
)

type getConfigArgs struct {
	Target   string     `json:"target" args:"nonempty" jsonschema:"A project, project#task or task name; none: all."`
	Filter   FilterList `json:"filter" jsonschema:"--filter value(s): NAME or glob, tag:T, ./PATH, [REF], NAME..., ...NAME, !F."`
	Affected *Affected  `json:"affected" jsonschema:"Changed since the default branch (true) or this ref, and dependents."`
	Cursor   string     `json:"cursor" args:"nonempty" jsonschema:"An answer's nextCursor."`
}

// getConfig answers as `vx show <target> --format json`.
func (e *Env) getConfig() Tool {
	return Tool{
		Name:         "getConfig",
		Title:        "Resolved config of a project or task",
		Description:  "What does this task declare? vx show --format json: the resolved inputs, outputs, env, sandbox, dependsOn, scripts and where each value was set, secrets masked. target: a project, project#task or a task name.",
		InputSchema:  inputOf[getConfigArgs](),
		OutputSchema: outputOf[show.Document](true),
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
			doc, err := show.Show(ctx, ws, show.Options{Target: args.Target, Select: selectOptions(args.Filter, args.Affected)})
			if err != nil {
				return nil, err
			}
			return e.fit(ctx, call, "getConfig", args.Cursor, configPage{doc, len(doc.Projects)}, window.Of("projects", &doc.Projects))
		},
	}
}
