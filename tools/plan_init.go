package tools

import (
	"context"

	"github.com/vzn/vx/engine/initplan"
	"github.com/vzn/vx/tools/window"
)

type planInitArgs struct {
	Mode   string `json:"mode" args:"nonempty" schema:"enum=auto|turbo|nx|scripts" jsonschema:"auto (default): turbo.json, else nx.json, else package scripts."`
	Cursor string `json:"cursor" args:"nonempty" jsonschema:"An answer's nextCursor."`
}

// planInit answers as `vx init --dry --format json`.
func (e *Env) planInit() Tool {
	return Tool{
		Name:         "planInit",
		Title:        "Plan adopting vx",
		Description:  "What would adopting vx write here? vx init --dry --format json: each file with its text and status, todos, notes, next commands, translated from turbo.json, nx.json or package scripts. Writes nothing.",
		InputSchema:  inputOf[planInitArgs](),
		OutputSchema: outputOf[initplan.Plan](true),
		Annotations:  readOnly,
		Handler: func(ctx context.Context, call *Call) (any, error) {
			var args planInitArgs
			if err := DecodeArgs(call.Args, &args); err != nil {
				return nil, err
			}
			root, err := e.Loader.Root()
			if err != nil {
				return nil, err
			}
			plan, err := initplan.Init(initplan.Options{Dir: root, Mode: args.Mode, Dry: true})
			if err != nil {
				return nil, err
			}
			return e.fit(ctx, call, "planInit", args.Cursor, plan, window.OfCut("files", &plan.Files, cutFile),
				window.Of("todos", &plan.Todos), window.Of("notes", &plan.Notes), window.Of("projects", &plan.Projects))
		},
	}
}
