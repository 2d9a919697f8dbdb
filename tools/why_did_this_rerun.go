package tools

import (
	"context"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/actor/tool/window"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/store"
)

type whyDidThisRerunArgs struct {
	TaskID string `json:"taskId" arg:"required,nonempty,pattern=^[^#]+#.+$,doc=project#task."`
	RunID  string `json:"runId" arg:"nonempty,doc=Run id or unique prefix; default the task's latest run."`
	Cursor string `json:"cursor" arg:"nonempty,doc=nextCursor."`
}

// whyDidThisRerun answers as `vx why TASKID [--run ID] --format json`.
func (d *Deps) whyDidThisRerun() tool.Tool {
	return tool.New(tool.Tool{
		Name:        "whyDidThisRerun",
		Title:       "Why a task re-executed",
		Description: "Why did pkg#test run again (or hit) in run X? Its cache key against its previous run's: changed, and what moved (files, global files, env names, command, scripts, lockfile versions, upstream keys, outputs), and the roots whose own inputs moved. As vx why --format json.",
		Paged:       true,
		// The original's nested why repeats the top-level facts, its entries the structured diff,
		// and the two runs compared are the same shape: described as objects (docs/mcp.md names
		// their fields), to keep tools/list within its budget.
		OutputTypes: map[reflect.Type]*jsonschema.Schema{
			reflect.TypeFor[history.WhyCore](): {Types: []string{"object", "null"}},
			reflect.TypeFor[history.Entry]():   {Type: "object"},
			reflect.TypeFor[history.RunSide](): {Types: []string{"object", "null"}},
		},
		Annotations: readOnly,
	}, func(ctx context.Context, call *tool.Call, args whyDidThisRerunArgs) (*history.Why, error) {
		why, err := taskQuery(ctx, d, args.TaskID, "the key of", func(st *store.Store) (*history.Why, error) {
			return history.Explain(ctx, st, args.TaskID, args.RunID)
		})
		if err != nil {
			return nil, err
		}
		maskWhy(why, d.secretsMasker().String)
		diff := &why.Diff
		call.Window(ctx, args.Cursor, window.Of("diff.files.modified", &diff.Files.Modified), window.Of("diff.files.added", &diff.Files.Added), window.Of("diff.files.removed", &diff.Files.Removed), window.Of("diff.global.modified", &diff.Global.Modified), window.Of("diff.global.added", &diff.Global.Added), window.Of("diff.global.removed", &diff.Global.Removed), window.Of("diff.packages", &diff.Packages), window.Of("diff.upstream", &diff.Upstream), window.Of("diff.entries", &diff.Entries), window.Of("roots", &why.Roots))
		return why, nil
	})
}

// maskWhy masks the free text of the answer: commands and the sides of its entries, should one
// spell a secret out.
func maskWhy(w *history.Why, mask func(string) string) {
	maskCommand := func(c *history.CommandChange) {
		if c != nil {
			c.Before, c.After = mask(c.Before), mask(c.After)
		}
	}
	maskEntries := func(es []history.Entry) {
		for i := range es {
			for _, side := range []**string{&es[i].Before, &es[i].After} {
				if *side != nil {
					masked := mask(**side)
					*side = &masked
				}
			}
		}
	}
	maskCommand(w.Diff.Command)
	maskEntries(w.Diff.Entries)
	for i := range w.Roots {
		maskCommand(w.Roots[i].Command)
		maskEntries(w.Roots[i].Entries)
	}
}
