package main

import (
	"cmp"

	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/vxerr"
	"github.com/vzn/vx/engine/workspace"
)

// splitAtDash splits a verb's positional arguments at the `--` of its command line: what comes
// before it (task names, a target) and what comes after it (the arguments for the tasks'
// commands). Without a `--`, all of them come before.
func splitAtDash(cmd *cobra.Command, args []string) (before, after []string) {
	dash := cmd.ArgsLenAtDash()
	if dash < 0 || dash > len(args) {
		return args, nil
	}
	return args[:dash], args[dash:]
}

// showArgs answers ws with the arguments after `--` of `vx show TARGET -- ARGS` appended to the
// commands of the tasks TARGET names (a project#task, or a task name in every project that has
// it), as vx run would append them. A target that names no task is refused.
func showArgs(ws *graph.Workspace, target string, args []string) (*graph.Workspace, error) {
	if len(args) == 0 {
		return ws, nil
	}
	var ids []string
	for _, p := range ws.Projects {
		for _, t := range p.Tasks {
			if t.ID == target || t.Name == target {
				ids = append(ids, t.ID)
			}
		}
	}
	if len(ids) == 0 {
		return nil, vxerr.Usagef("the arguments after -- go to a task's command: name the task (vx show %s -- %s)",
			workspace.ShellQuote(cmp.Or(target, "test")), workspace.ShellQuote(args[0]))
	}
	return workspace.WithArgs(ws, ids, args), nil
}
