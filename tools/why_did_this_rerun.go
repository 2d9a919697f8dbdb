package tools

import (
	"context"

	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/tools/window"
)

type whyDidThisRerunArgs struct {
	TaskID string `json:"taskId" args:"required,nonempty" schema:"pattern=^[^#]+#.+$" jsonschema:"project#task."`
	RunID  string `json:"runId" args:"nonempty" jsonschema:"Run id or unique prefix; default the task's latest run."`
	Cursor string `json:"cursor" args:"nonempty" jsonschema:"An answer's nextCursor."`
}

// whyDidThisRerun answers as `vx why TASKID [--run ID] --format json`.
func (e *Env) whyDidThisRerun() Tool {
	return Tool{
		Name:         "whyDidThisRerun",
		Title:        "Why a task re-executed",
		Description:  "Why did pkg#test run again (or hit) in run X? Its cache key against its previous run's: changed, and what moved (input files, global files, env names, the command, package scripts, lockfile packages with both versions, upstream keys, outputs), and under a moved upstream the roots whose own inputs moved. runId: whole or unique prefix; default the task's latest run. As vx why --format json.",
		InputSchema:  inputOf[whyDidThisRerunArgs](),
		OutputSchema: outputOf[history.Why](true),
		Annotations:  readOnly,
		Handler: func(ctx context.Context, call *Call) (any, error) {
			var args whyDidThisRerunArgs
			if err := DecodeArgs(call.Args, &args); err != nil {
				return nil, err
			}
			why, err := taskQuery(ctx, e, args.TaskID, "the key of", func(st *store.Store) (*history.Why, error) {
				return history.Explain(ctx, st, args.TaskID, args.RunID)
			})
			if err != nil {
				return nil, err
			}
			maskWhy(why, e.secretsMasker().String)
			d := &why.Diff
			return e.fit(ctx, call, "whyDidThisRerun", args.Cursor, why,
				window.Of("diff.files.modified", &d.Files.Modified), window.Of("diff.files.added", &d.Files.Added),
				window.Of("diff.files.removed", &d.Files.Removed), window.Of("diff.global.modified", &d.Global.Modified),
				window.Of("diff.global.added", &d.Global.Added), window.Of("diff.global.removed", &d.Global.Removed),
				window.Of("diff.packages", &d.Packages), window.Of("diff.upstream", &d.Upstream), window.Of("roots", &why.Roots))
		},
	}
}

// maskWhy masks the only free text of the answer: commands, should one spell a secret out.
func maskWhy(w *history.Why, mask func(string) string) {
	maskCommand := func(c *history.CommandChange) {
		if c != nil {
			c.Before, c.After = mask(c.Before), mask(c.After)
		}
	}
	maskCommand(w.Diff.Command)
	for i := range w.Roots {
		maskCommand(w.Roots[i].Command)
	}
}
