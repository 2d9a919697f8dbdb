package tools

import (
	"context"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/actor/tool/window"
	"github.com/vzn/vx/engine/initplan"
)

type planInitArgs struct {
	Mode   string `json:"mode" arg:"nonempty,enum=auto|turbo|nx|scripts,doc=auto (default): turbo.json, else nx.json, else package scripts."`
	Cursor string `json:"cursor" arg:"nonempty,doc=An answer's nextCursor."`
}

// planInit answers as `vx init --dry --format json`.
func (d *Deps) planInit() tool.Tool {
	return tool.New(tool.Tool{
		Name:        "planInit",
		Title:       "Plan adopting vx",
		Description: "What would adopting vx write here? vx init --dry --format json: each file with its text and status, todos, notes, next commands, translated from turbo.json, nx.json or package scripts. Writes nothing.",
		Paged:       true,
		Annotations: readOnly,
	}, func(ctx context.Context, call *tool.Call, args planInitArgs) (*initplan.Plan, error) {
		root, err := d.Loader.Root()
		if err != nil {
			return nil, err
		}
		plan, err := initplan.Init(initplan.Options{Dir: root, Mode: args.Mode, Dry: true})
		if err != nil {
			return nil, err
		}
		call.Window(ctx, args.Cursor, window.OfCut("files", &plan.Files, cutFile), window.Of("todos", &plan.Todos), window.Of("notes", &plan.Notes), window.Of("projects", &plan.Projects))
		return plan, nil
	})
}
