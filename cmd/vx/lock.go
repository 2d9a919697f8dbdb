package main

import (
	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/configlock"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/vxerr"
)

func (a *app) lockCmd() *cobra.Command {
	var check bool
	cmd := &cobra.Command{
		Use:   "lock",
		Short: "Record each task's resolved config in vx.lock, or with --check report what changed since",
		Long: `vx lock records every task's resolved config — command, env names, exec.env (secret names, never
values), inputs, outputs, dependsOn, cache, sandbox — in vx.lock at the workspace root, to commit.
vx lock --check compares the config with it and exits 1 on drift, naming each task and field.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var r *configlock.Report
			var err error
			if check {
				var ws *graph.Workspace
				if ws, err = a.load(cmd.Context()); err != nil {
					return err
				}
				r, err = configlock.Check(ws)
			} else {
				r, err = a.writeLock(cmd.Context())
			}
			if err != nil {
				return err
			}
			if err := a.emit(r, r.WriteText); err != nil {
				return err
			}
			if r.ExitCode != vxerr.ExitOK {
				return &vxerr.FailureError{}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&check, "check", false, "compare with vx.lock instead of writing it; exit 1 on drift")
	return cmd
}
