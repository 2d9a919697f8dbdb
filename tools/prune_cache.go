package tools

import (
	"context"
	"errors"

	"github.com/vzn/vx/engine/prune"
	"github.com/vzn/vx/tools/window"
)

type pruneCacheArgs struct {
	OlderThan string `json:"olderThan" args:"nonempty" jsonschema:"Evict entries unused for this long: 12h, 7d, 2w."`
	MaxSize   string `json:"maxSize" args:"nonempty" jsonschema:"Evict least recently used until the cache fits: 500MB, 2G; 0 empties it."`
	DryRun    *bool  `json:"dryRun" schema:"default=true" jsonschema:"true (default): only say what would go. false: remove it."`
	Cursor    string `json:"cursor" args:"nonempty" jsonschema:"An answer's nextCursor."`
}

// pruneCache answers as `vx cache prune [--older-than D] [--max-size S] [--dry-run] --format json`,
// a dry run unless dryRun is false.
func (e *Env) pruneCache() Tool {
	return Tool{
		Name:         "pruneCache",
		Title:        "Prune the cache",
		Description:  "Free cache space. Evicts entries last used before olderThan, then the least recently used until the cache fits maxSize (0 empties it), and removes orphan blobs; history is kept. A dry run unless dryRun is false. As vx cache prune --format json.",
		InputSchema:  inputOf[pruneCacheArgs](),
		OutputSchema: outputOf[prune.Result](true),
		Annotations: Annotations{ReadOnlyHint: ptr(false), DestructiveHint: ptr(true), IdempotentHint: ptr(true),
			OpenWorldHint: ptr(false)},
		Handler: func(ctx context.Context, call *Call) (any, error) {
			var args pruneCacheArgs
			if err := DecodeArgs(call.Args, &args); err != nil {
				return nil, err
			}
			dryRun := args.DryRun == nil || *args.DryRun
			if args.Cursor != "" && !dryRun {
				return nil, Refusef("argument %q pages a dry run's list: a prune that removes cannot be asked again", "cursor")
			}
			// As vx cache prune: the state folder of the workspace root, config not needed.
			res, err := prune.Run(ctx, e.Loader.Root, prune.Request{OlderThan: args.OlderThan, MaxSize: args.MaxSize,
				DryRun: dryRun, Getenv: e.getenv})
			var value *prune.ValueError
			if errors.As(err, &value) {
				// The engine names the field as this tool names the argument.
				return nil, Refusef("argument %q: %s", value.Field, oneLine(value.Error()))
			}
			if err != nil {
				return nil, err
			}
			// What a prune removed cannot be asked again: its list is cut, counted, and has no cursor.
			return e.fitRequest(ctx, call, window.Request{Question: window.Question{Tool: "pruneCache"}, Cursor: args.Cursor, Final: !dryRun},
				res, window.Of("evicted", &res.Evicted))
		},
	}
}
