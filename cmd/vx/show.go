package main

import (
	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/show"
	"github.com/vzn/vx/engine/workspace"
)

// selectFlags are the selection flags every selecting verb shares.
type selectFlags struct {
	filters  []string
	affected string
}

const affectedDefault = "\x00default"

func (f *selectFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.filters, "filter", nil, "narrow to projects: a name, a glob, tag:NAME, NAME... (with its dependencies), ...NAME (with its dependents); repeatable")
	cmd.Flags().StringVar(&f.affected, "affected", "", "narrow to projects with files changed since the merge-base with `REF` (default: the default branch), uncommitted and untracked files, and their dependents")
	cmd.Flags().Lookup("affected").NoOptDefVal = affectedDefault
}

// options converts the flags to selection options.
func (f *selectFlags) options() workspace.SelectOptions {
	opts := workspace.SelectOptions{Filters: f.filters}
	if f.affected != "" {
		opts.Affected = true
		if f.affected != affectedDefault {
			opts.AffectedRef = f.affected
		}
	}
	return opts
}

func (a *app) showCmd() *cobra.Command {
	var sel selectFlags
	cmd := &cobra.Command{
		Use:   "show [target]",
		Short: "Show the resolved workspace, a project, a project#task, or a task name across projects",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := a.load(cmd.Context())
			if err != nil {
				return err
			}
			opts := show.Options{Select: sel.options()}
			if len(args) == 1 {
				opts.Target = args[0]
			}
			doc, err := show.Show(cmd.Context(), ws, opts)
			if err != nil {
				return err
			}
			return a.emit(doc, doc.WriteText)
		},
	}
	sel.register(cmd)
	return cmd
}
