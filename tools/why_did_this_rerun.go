package tools

import (
	"context"

	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/store"
)

type whyDidThisRerunArgs struct {
	TaskID string `json:"taskId" args:"required,nonempty"`
	RunID  string `json:"runId" args:"nonempty"`
}

// whyDidThisRerun answers as `vx why TASKID [--run ID] --format json`.
func (e *Env) whyDidThisRerun() Tool {
	fileDiff := outObject(map[string]any{
		"added":    outList(outString(""), "Input files added, relative to the project."),
		"removed":  outList(outString(""), "Input files removed."),
		"modified": outList(outString(""), "Input files whose content changed."),
	}, "added", "removed", "modified")
	command := outNullable(outObject(map[string]any{"before": outString(""), "after": outString("")}, "before", "after"))
	command["description"] = "The command before and after; null when it did not change."
	env := outList(outString(""), "env and exec.env names whose value changed (values are never shown).")
	packages := outList(outObject(map[string]any{"name": outString(""), "before": outString("Empty: added."), "after": outString("Empty: removed.")},
		"name", "before", "after"), "External packages whose resolved version moved in the lockfile.")
	return Tool{
		Name:        "whyDidThisRerun",
		Title:       "Why a task re-executed",
		Description: "Why did pkg#test run again (or hit) in run X? Its cache key against its previous run's: changed, and what moved (input files, global files, env names, the command, package scripts, lockfile packages with both versions, upstream keys, outputs), and under a moved upstream the roots whose own inputs moved. runId: whole or unique prefix; default the task's latest run. As vx why --format json.",
		InputSchema: schema(map[string]any{
			"taskId": map[string]any{"type": "string", "minLength": 1, "pattern": "^[^#]+#.+$", "description": "The task id, project#task (e.g. app#test)."},
			"runId":  map[string]any{"type": "string", "minLength": 1, "description": "The run: its whole id or a unique prefix. Leave out for the task's latest run."},
		}, "taskId"),
		OutputSchema: rawSchema(outObject(map[string]any{
			"taskId":        outString("project#task."),
			"runId":         outString("The run explained (whole id)."),
			"status":        outString("The task's status in that run."),
			"hash":          outString("Its cache key in that run."),
			"previousRunId": outNullable(outString("The task's previous run with a key; null when none (then changed is true).")),
			"previousHash":  outNullable(outString("Its key then.")),
			"changed":       outBool("Whether the key changed."),
			"diff": outObject(map[string]any{
				"files":    fileDiff,
				"env":      env,
				"command":  command,
				"upstream": outList(outObject(map[string]any{"taskId": outString(""), "before": outString("Empty: added."), "after": outString("Empty: removed.")}), "Dependencies whose key moved."),
				"outputs":  outBool("The declared outputs changed."),
				"version":  outBool("vx's cache version changed."),
				"scripts":  outList(outString(""), "package.json scripts the command runs whose text changed."),
				"global":   fileDiff,
				"packages": packages,
				"lockfile": outBool("A lockfile vx cannot parse changed."),
				"through":  outList(outString(""), "Dependencies without the task (passed through by ^task) whose files changed."),
			}, "files", "env", "command", "upstream", "outputs", "version", "scripts", "global", "packages", "lockfile", "through"),
			"roots": outList(outObject(map[string]any{"taskId": outString(""), "files": fileDiff, "env": env, "command": command,
				"scripts": outList(outString(""), ""), "packages": packages}),
				"Under a moved upstream: the tasks whose own inputs moved, and what moved."),
			"reason": outString("Why the task ran or hit, in one line."),
		}, "taskId", "runId", "status", "hash", "previousRunId", "previousHash", "changed", "diff", "roots", "reason")),
		Annotations: readOnly,
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
			return why, nil
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
