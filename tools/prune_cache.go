package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/actor/tool/window"
	"github.com/vzn/vx/engine/prune"
)

type pruneCacheArgs struct {
	OlderThan string `json:"olderThan" arg:"nonempty,doc=Evict entries unused for this long: 12h, 7d, 2w."`
	MaxSize   string `json:"maxSize" arg:"nonempty,doc=Evict least recently used until the cache fits: 500MB, 2G; 0 empties it."`
	DryRun    *bool  `json:"dryRun" arg:"default=true,doc=true (default): only say what would go. false: remove it."`
	Cursor    string `json:"cursor" arg:"nonempty,doc=nextCursor."`
}

// PruneAnswer is pruneCache's answer, as the original's: vx cache prune's exit status and its
// --format json document.
type PruneAnswer struct {
	ExitCode int           `json:"exitCode"`
	Prune    *prune.Result `json:"prune"`
}

// pruneCache answers as `vx cache prune [--older-than D] [--max-size S] [--dry-run] --format json`,
// a dry run unless dryRun is false.
func (d *Deps) pruneCache() tool.Tool {
	return tool.New(tool.Tool{
		Name:        "pruneCache",
		Title:       "Prune the cache",
		Description: "Free cache space. Evicts entries last used before olderThan, then the least recently used until the cache fits maxSize (0 empties it), and removes orphan blobs; history is kept. As vx cache prune --format json.",
		Paged:       true,
		Annotations: tool.Annotations{ReadOnlyHint: ptr(false), DestructiveHint: ptr(true), IdempotentHint: ptr(true),
			OpenWorldHint: ptr(false)},
		OutputTypes: documentSchema[prune.Result](),
	}, func(ctx context.Context, call *tool.Call, args pruneCacheArgs) (*PruneAnswer, error) {
		dryRun := args.DryRun == nil || *args.DryRun
		if args.Cursor != "" && !dryRun {
			return nil, tool.Refusef("argument %q pages a dry run's list: a prune that removes cannot be asked again", "cursor")
		}
		if !dryRun && call.Confirm != nil {
			if err := d.confirmPrune(ctx, call, args); err != nil {
				return nil, err
			}
		}
		// As vx cache prune: the shared store and the checkout's folder; a broken config does not stop it.
		res, err := prune.Run(ctx, d.loader().Root, prune.Request{OlderThan: args.OlderThan, MaxSize: args.MaxSize,
			DryRun: dryRun, Getenv: d.getenv, Dirs: d.loader().StoreDirs})
		var value *prune.ValueError
		if errors.As(err, &value) {
			// The engine names the field as this tool names the argument.
			return nil, tool.Refusef("argument %q: %s", value.Field, tool.OneLine(value.Error()))
		}
		if err != nil {
			return nil, err
		}
		// What a prune removed cannot be asked again: its list is cut, counted, and has no cursor.
		call.WindowRequest(ctx, window.Request{Cursor: args.Cursor, Final: !dryRun}, window.Of("prune.evictedEntries", &res.Evicted))
		return &PruneAnswer{Prune: res}, nil
	})
}

// confirmPrune asks the user to confirm a prune that removes, saying what a dry run of the same
// arguments finds would go; nil once they accepted.
func (d *Deps) confirmPrune(ctx context.Context, call *tool.Call, args pruneCacheArgs) error {
	dry, err := prune.Run(ctx, d.loader().Root, prune.Request{OlderThan: args.OlderThan, MaxSize: args.MaxSize, DryRun: true,
		Getenv: d.getenv})
	if err != nil {
		return nil // the prune itself refuses these arguments, with the same message
	}
	question := fmt.Sprintf("Remove %d cache entries (%d bytes) and %d orphan blobs from vx's cache? Run history is kept.",
		len(dry.Evicted), dry.BytesFreed, dry.Orphans)
	ok, err := call.Confirm(ctx, question)
	if err != nil {
		return err
	}
	if !ok {
		return tool.Refusef("the user declined to prune the cache: nothing was removed")
	}
	return nil
}
