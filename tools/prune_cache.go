package tools

import (
	"context"
	"errors"

	"github.com/vzn/vx/engine/prune"
)

type pruneCacheArgs struct {
	OlderThan string `json:"olderThan" args:"nonempty"`
	MaxSize   string `json:"maxSize" args:"nonempty"`
	DryRun    *bool  `json:"dryRun"`
}

// pruneCache answers as `vx cache prune [--older-than D] [--max-size S] [--dry-run] --format json`,
// a dry run unless dryRun is false.
func (e *Env) pruneCache() Tool {
	return Tool{
		Name:        "pruneCache",
		Title:       "Prune the cache",
		Description: "Free cache space. Evicts entries last used before olderThan, then the least recently used until the cache fits maxSize (0 empties it), and removes orphan blobs; history is kept. A dry run unless dryRun is false. As vx cache prune --format json.",
		InputSchema: schema(map[string]any{
			"olderThan": map[string]any{"type": "string", "minLength": 1,
				"description": "Evict entries last used longer ago than this duration, e.g. 12h, 7d, 2w (vx cache prune --older-than)."},
			"maxSize": map[string]any{"type": "string", "minLength": 1,
				"description": "Evict least recently used entries until the cache fits in this size, e.g. 500MB, 2G; 0 empties it (vx cache prune --max-size)."},
			"dryRun": map[string]any{"type": "boolean", "default": true,
				"description": "true (the default): answer what would be pruned, remove nothing. false: remove it."},
		}),
		OutputSchema: pruneOutputSchema,
		Annotations: Annotations{ReadOnlyHint: ptr(false), DestructiveHint: ptr(true), IdempotentHint: ptr(true),
			OpenWorldHint: ptr(false)},
		Handler: func(ctx context.Context, call *Call) (any, error) {
			var args pruneCacheArgs
			if err := DecodeArgs(call.Args, &args); err != nil {
				return nil, err
			}
			// As vx cache prune: the state folder of the workspace root, config not needed.
			res, err := prune.Run(ctx, e.Loader.Root, prune.Request{OlderThan: args.OlderThan, MaxSize: args.MaxSize,
				DryRun: args.DryRun == nil || *args.DryRun, Getenv: e.getenv})
			var value *prune.ValueError
			if errors.As(err, &value) {
				// The engine names the field as this tool names the argument.
				return nil, Refusef("argument %q: %s", value.Field, oneLine(value.Error()))
			}
			if err != nil {
				return nil, err
			}
			return res, nil
		},
	}
}

var pruneOutputSchema = mustJSON(map[string]any{
	"type":     "object",
	"required": []string{"dryRun", "evicted", "bytesFreed", "orphans", "orphanBytes", "staleFileStats"},
	"properties": map[string]any{
		"dryRun": map[string]any{"type": "boolean", "description": "true when nothing was removed (the answer says what would be)."},
		"evicted": map[string]any{"type": "array", "description": "The cache entries evicted (or that would be), least recently used first.",
			"items": map[string]any{"type": "object", "properties": map[string]any{
				"hash": map[string]any{"type": "string"}, "taskId": map[string]any{"type": "string"},
				"size": map[string]any{"type": "integer"}, "lastUsed": map[string]any{"type": "string", "format": "date-time"}}}},
		"bytesFreed":     map[string]any{"type": "integer", "description": "Bytes freed (or that would be): the evicted entries' blobs and the orphans."},
		"orphans":        map[string]any{"type": "integer", "description": "Blobs no cache entry or history references."},
		"orphanBytes":    map[string]any{"type": "integer", "description": "Their size in bytes."},
		"staleFileStats": map[string]any{"type": "integer", "description": "Stat-cache rows of files that no longer exist, removed (or that would be)."},
	},
})
