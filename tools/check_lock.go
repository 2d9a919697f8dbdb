package tools

import (
	"context"

	"github.com/vzn/vx/engine/lock"
)

type checkLockArgs struct{}

// checkLock answers as `vx lock --check --format json`.
func (e *Env) checkLock() Tool {
	return Tool{
		Name:         "checkLock",
		Title:        "Check the config lock",
		Description:  "Is the config lock current? vx lock --check --format json: upToDate, audited and notAudited tasks, and each drift (task, field, locked, current) in problems; exitCode 1 on drift. Call it after editing vx config or package scripts.",
		InputSchema:  schema(map[string]any{}),
		OutputSchema: outputSchema("exitCode", "upToDate", "audited", "notAudited", "problems"),
		Annotations:  readOnly,
		Handler: func(ctx context.Context, call *Call) (any, error) {
			var args checkLockArgs
			if err := DecodeArgs(call.Args, &args); err != nil {
				return nil, err
			}
			ws, err := e.load(ctx)
			if err != nil {
				return nil, err
			}
			return lock.Check(ws)
		},
	}
}
