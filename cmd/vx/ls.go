package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/show"
)

// ansiBold makes a project's name stand out in vx ls.
const ansiBold = "\x1b[1m"

// lsCmd is `vx ls`, as `turbo ls`: the projects, each with its folder and its tasks.
func (a *app) lsCmd() *cobra.Command {
	var sel selectFlags
	cmd := &cobra.Command{
		Use:   "ls [project…]",
		Short: "List the projects and their tasks, a line each",
		Long: `List the projects, a line each: its name, its folder and its tasks' names, as turbo ls does.
Projects named as arguments, --filter, --exclude and --affected narrow the list as they narrow vx run.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := a.load(cmd.Context())
			if err != nil {
				return err
			}
			// A project named as an argument is one more --filter.
			sel.filters = append(sel.filters, args...)
			so, err := a.selectOptions(ws, &sel)
			if err != nil {
				return err
			}
			list, err := show.ListProjects(cmd.Context(), ws, so)
			if err != nil {
				return err
			}
			return a.emit(list, func(w io.Writer) error {
				return list.WriteText(w, func(s string) string { return a.paint(w, ansiBold, s) })
			})
		},
	}
	sel.register(cmd)
	cmd.SetUsageFunc(leafUsage)
	return cmd
}
