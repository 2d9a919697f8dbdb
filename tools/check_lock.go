package tools

import (
	"context"

	"github.com/vzn/vx/engine/lock"
	"github.com/vzn/vx/tools/window"
)

type checkLockArgs struct {
	Cursor string `json:"cursor" args:"nonempty" jsonschema:"An answer's nextCursor."`
}

// checkLock answers as `vx lock --check --format json`.
func (e *Env) checkLock() Tool {
	return Tool{
		Name:         "checkLock",
		Title:        "Check the config lock",
		Description:  "Is the config lock current? vx lock --check --format json: upToDate, audited and notAudited tasks, and each drift (task, field, locked, current) in problems; exitCode 1 on drift. Call it after editing vx config or package scripts.",
		InputSchema:  inputOf[checkLockArgs](),
		OutputSchema: outputOf[lock.Report](true),
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
			report, err := lock.Check(ws)
			if err != nil {
				return nil, err
			}
			return e.fit(ctx, call, "checkLock", args.Cursor, report,
				window.Of("problems", &report.Problems), window.Of("notAudited", &report.NotAudited), window.Of("audited", &report.Audited))
		},
	}
}
