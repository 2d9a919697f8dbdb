package tools

import (
	"context"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/actor/tool/window"
	"github.com/vzn/vx/engine/show"
)

type getConfigArgs struct {
	Target   string     `json:"target" arg:"nonempty,doc=A project, project#task or task name; none: all."`
	Filter   FilterList `json:"filter" arg:"doc=--filter value(s): NAME or glob, tag:T, ./PATH, [REF], NAME..., ...NAME, !F."`
	Affected *Affected  `json:"affected" arg:"doc=Changed since the default branch (true) or this ref, and dependents."`
	Cursor   string     `json:"cursor" arg:"nonempty,doc=nextCursor."`
}

// getConfig answers as `vx show <target> --format json`.
func (d *Deps) getConfig() tool.Tool {
	return tool.New(tool.Tool{
		Name:        "getConfig",
		Title:       "Resolved config of a project or task",
		Description: "What does this task declare? vx show --format json: the resolved inputs, outputs, env, sandbox, dependsOn, scripts and where each value was set, secrets masked. target: a project, project#task or a task name.",
		Paged:       true,
		Annotations: readOnly,
	}, func(ctx context.Context, call *tool.Call, args getConfigArgs) (*configPage, error) {
		ws, err := d.load(ctx)
		if err != nil {
			return nil, err
		}
		doc, err := show.Show(ctx, ws, show.Options{Target: args.Target, Select: selectOptions(args.Filter, args.Affected)})
		if err != nil {
			return nil, err
		}
		call.Window(ctx, args.Cursor, window.Of("projects", &doc.Projects))
		return &configPage{doc, len(doc.Projects)}, nil
	})
}
