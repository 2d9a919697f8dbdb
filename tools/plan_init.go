package tools

import (
	"context"

	"github.com/vzn/vx/engine/initplan"
)

type planInitArgs struct {
	Mode string `json:"mode" args:"nonempty"`
}

// planInit answers as `vx init --dry --format json`.
func (e *Env) planInit() Tool {
	return Tool{
		Name:        "planInit",
		Title:       "Plan adopting vx",
		Description: "What would adopting vx write here? vx init --dry --format json: each file with its text and status, todos, notes, next commands, translated from turbo.json, nx.json or package scripts. Writes nothing.",
		InputSchema: schema(map[string]any{
			"mode": map[string]any{"type": "string", "enum": []string{"auto", "turbo", "nx", "scripts"},
				"description": "Where tasks come from: auto (default: turbo.json, else nx.json, else package scripts), turbo, nx or scripts."},
		}),
		OutputSchema: outputSchema("mode", "files", "todos", "notes", "next"),
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
			return initplan.Init(initplan.Options{Dir: root, Mode: args.Mode, Dry: true})
		},
	}
}
