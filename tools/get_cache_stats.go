package tools

import (
	"context"
	"time"

	"github.com/vzn/vx/engine/history"
)

type getCacheStatsArgs struct {
	Scope *cacheScopeArg `json:"scope" jsonschema:"Narrow every number to part of the workspace."`
}

type cacheScopeArg struct {
	Project string `json:"project" args:"nonempty" jsonschema:"A project name."`
}

// getCacheStats answers as `vx cache stats [--project P] --format json`.
func (e *Env) getCacheStats() Tool {
	return Tool{
		Name:         "getCacheStats",
		Title:        "Cache statistics",
		Description:  "What's the state of my cache? Entries, total bytes, runs and hits in the last 24h, hit rate; scope: { project } narrows every number. Call it before pruneCache, or when runs seem slow. As vx cache stats --format json. Reads the index only.",
		InputSchema:  inputOf[getCacheStatsArgs](),
		OutputSchema: outputOf[history.CacheStats](false),
		Annotations:  readOnly,
		Handler: func(ctx context.Context, call *Call) (any, error) {
			var args getCacheStatsArgs
			if err := DecodeArgs(call.Args, &args); err != nil {
				return nil, err
			}
			project := ""
			if args.Scope != nil {
				project = args.Scope.Project
			}
			st, err := e.openState(ctx)
			if err != nil {
				return nil, err
			}
			defer st.Close()
			stats, err := history.Cache(ctx, st, project, time.Now())
			if err != nil {
				return nil, historyError(err, "cache statistics")
			}
			return stats, nil
		},
	}
}
