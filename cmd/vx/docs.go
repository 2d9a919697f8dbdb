package main

import (
	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/vxerr"
)

// docsCmd is a placeholder until the verb lands.
func (a *app) docsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "docs",
		Short: "docs (not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return vxerr.Usagef("vx docs is not built yet")
		},
	}
}
