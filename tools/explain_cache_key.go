package tools

import (
	"context"

	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/store"
)

type explainCacheKeyArgs struct {
	TaskID string `json:"taskId" args:"required,nonempty" schema:"pattern=^[^#]+#.+$" jsonschema:"project#task."`
}

// explainCacheKey answers a task's latest cache entry from history.LatestEntry.
func (e *Env) explainCacheKey() Tool {
	return Tool{
		Name:         "explainCacheKey",
		Title:        "A task's cache identity",
		Description:  "What's the cache identity of pkg#build? The task's latest cache entry: hash, command, exitCode, duration, size, output count, created and last used; found is false when it has none. Reads the index only.",
		InputSchema:  inputOf[explainCacheKeyArgs](),
		OutputSchema: outputOf[history.KeyInfo](false),
		Annotations:  readOnly,
		Handler: func(ctx context.Context, call *Call) (any, error) {
			var args explainCacheKeyArgs
			if err := DecodeArgs(call.Args, &args); err != nil {
				return nil, err
			}
			info, err := taskQuery(ctx, e, args.TaskID, "the cache entry of", func(st *store.Store) (*history.KeyInfo, error) {
				return history.LatestEntry(ctx, st, args.TaskID)
			})
			if err != nil {
				return nil, err
			}
			if info.Found {
				info.Command = e.secretsMasker().String(info.Command)
			}
			return info, nil
		},
	}
}
