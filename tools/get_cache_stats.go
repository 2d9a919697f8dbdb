package tools

import (
	"context"
	"time"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/engine/history"
)

type getCacheStatsArgs struct {
	Scope *cacheScopeArg `json:"scope" arg:"doc=Narrow every number to part of the workspace."`
}

type cacheScopeArg struct {
	Project string `json:"project" arg:"nonempty,doc=A project name."`
}

// getCacheStats answers as `vx cache stats [--project P] --format json`.
func (d *Deps) getCacheStats() tool.Tool {
	return tool.New(tool.Tool{
		Name:        "getCacheStats",
		Title:       "Cache statistics",
		Description: "What's the state of my cache? Entries, total bytes, runs and hits in the last 24h, hit rate; scope: { project } narrows every number. Call it before pruneCache. As vx cache stats --format json. Reads the index only.",
		Annotations: readOnly,
	}, func(ctx context.Context, call *tool.Call, args getCacheStatsArgs) (*history.CacheStats, error) {
		project := ""
		if args.Scope != nil {
			project = args.Scope.Project
		}
		st, release, err := d.openState(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
		stats, err := history.Cache(ctx, st, project, time.Now())
		if err != nil {
			return nil, historyError(err, "cache statistics")
		}
		return stats, nil
	})
}
