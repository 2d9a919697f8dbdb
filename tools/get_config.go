package tools

import (
	"context"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

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

// ConfigAnswer is getConfig's answer, as the original's: vx show's exit status and its --format
// json document.
type ConfigAnswer struct {
	ExitCode int        `json:"exitCode"`
	Config   configPage `json:"config"`
}

// getConfig answers as `vx show <target> --format json`.
func (d *Deps) getConfig() tool.Tool {
	return tool.New(tool.Tool{
		Name:        "getConfig",
		Title:       "Resolved config of a project or task",
		Description: "What does this task declare? vx show --format json: the resolved inputs, outputs, env, sandbox, dependsOn, scripts and where each value was set, secrets masked. target: a project, project#task or a task name.",
		Paged:       true,
		// config is vx show's document in the original's shape for the target: a list of
		// projects, a project, a task or a list of tasks.
		OutputTypes: map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[configPage](): {Types: []string{"array", "object"},
			Items: &jsonschema.Schema{Type: "object"}}},
		Annotations: readOnly,
	}, func(ctx context.Context, call *tool.Call, args getConfigArgs) (*ConfigAnswer, error) {
		ws, err := d.load(ctx)
		if err != nil {
			return nil, err
		}
		doc, err := show.Show(ctx, ws, show.Options{Target: args.Target, Select: selectOptions(args.Filter, args.Affected)})
		if err != nil {
			return nil, err
		}
		projects := window.Of("config", &doc.Projects)
		if args.Target == "" && args.Filter == nil && args.Affected == nil {
			// A first answer of a large workspace: the projects that fit, the cursor the rest,
			// target one project or task whole.
			rest := *doc
			rest.Projects = nil
			projects = summaryLists(jsonSize(ConfigAnswer{Config: configPage{&rest, 0}}), headedOf(projects, doc.Projects))[0]
		}
		call.Window(ctx, args.Cursor, projects)
		return &ConfigAnswer{Config: configPage{doc, len(doc.Projects)}}, nil
	})
}
