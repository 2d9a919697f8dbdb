package tools

import (
	"context"

	"github.com/vzn/vx/engine/lock"
)

type checkLockArgs struct{}

// checkLock answers as `vx lock --check --format json`.
func (e *Env) checkLock() Tool {
	return Tool{
		Name:  "checkLock",
		Title: "Check the config lock",
		Description: "Is the config lock current? Compares every task's resolved config (command, env names, exec.env secret " +
			"names, inputs, outputs, dependsOn, cache, sandbox) with the committed vx.lock: upToDate, audited and notAudited " +
			"task ids, and one problem per drift (task id, field, locked value, current value); exitCode 1 on drift. Call it " +
			"after changing a task's config, so a changed command is seen before CI runs it. The same document as " +
			"`vx lock --check --format json`. It never writes vx.lock.",
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
