package tools

import (
	"context"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/store"
)

type explainCacheKeyArgs struct {
	TaskID string `json:"taskId" arg:"required,nonempty,pattern=^[^#]+#.+$,doc=project#task."`
}

// explainCacheKey answers a task's latest cache entry from history.LatestEntry.
func (d *Deps) explainCacheKey() tool.Tool {
	return tool.New(tool.Tool{
		Name:        "explainCacheKey",
		Title:       "A task's cache identity",
		Description: "What's the cache identity of pkg#build? The task's latest cache entry: hash, command, exitCode, duration, size, output count, created and last used; found is false when it has none. Reads the index only.",
		Annotations: readOnly,
	}, func(ctx context.Context, call *tool.Call, args explainCacheKeyArgs) (*history.KeyInfo, error) {
		info, err := taskQuery(ctx, d, args.TaskID, "the cache entry of", func(st *store.Store) (*history.KeyInfo, error) {
			return history.LatestEntry(ctx, st, args.TaskID)
		})
		if err != nil {
			return nil, err
		}
		if info.Found {
			info.Command = d.secretsMasker().String(info.Command)
		}
		return info, nil
	})
}
