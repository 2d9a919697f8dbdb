package tools

import (
	"context"
	"strings"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/suggest"
)

type explainCacheKeyArgs struct {
	TaskID string `json:"taskId" arg:"required,nonempty,pattern=^[^#]+#.+$,doc=project#task."`
}

// nearestShown is how many of the nearest task ids a refusal of an unknown task names.
const nearestShown = 3

// explainCacheKey answers a task's latest cache entry from history.LatestEntry.
func (d *Deps) explainCacheKey() tool.Tool {
	return tool.New(tool.Tool{
		Name:        "explainCacheKey",
		Title:       "A task's cache identity",
		Description: "What's the cache identity of pkg#build? The task's latest cache entry: hash, command, exitCode, duration, size, output count, created and last used; found is false when it has none. Reads the index only.",
		Annotations: readOnly,
		OutputTypes: documentSchema[history.EntryBrief](),
	}, func(ctx context.Context, call *tool.Call, args explainCacheKeyArgs) (*history.KeyInfo, error) {
		info, err := taskQuery(ctx, d, args.TaskID, "the cache entry of", func(st *store.Store) (*history.KeyInfo, error) {
			info, err := history.LatestEntry(ctx, st, args.TaskID)
			if err != nil || info.Found {
				return info, err
			}
			return info, d.refuseUnknownTask(ctx, st, args.TaskID)
		})
		if err != nil {
			return nil, err
		}
		if info.Found {
			mask := d.secretsMasker().String
			info.Command, info.LatestEntry.Command = mask(info.Command), mask(info.LatestEntry.Command)
		}
		return info, nil
	})
}

// refuseUnknownTask refuses a task id that neither the workspace (when its config loads) nor the
// history knows, naming the nearest task ids of the workspace; nil for a known task.
func (d *Deps) refuseUnknownTask(ctx context.Context, st *store.Store, taskID string) error {
	ws, err := d.Session.Load(ctx)
	if err != nil {
		return nil // without the config, a task with no history cannot be told from a mistake
	}
	if _, ok := ws.Task(taskID); ok {
		return nil
	}
	if execs, err := st.TaskExecutions(ctx, store.ExecQuery{TaskID: taskID, Limit: 1}); err != nil || len(execs) > 0 {
		return err
	}
	msg := "no task is named " + taskID + " in this workspace or its history"
	if near := suggest.Nearest(taskID, ws.TaskIDs(), nearestShown); len(near) > 0 {
		msg += "; nearest: " + strings.Join(near, ", ")
	}
	return tool.Refusef("argument %q: %s", "taskId", msg)
}
