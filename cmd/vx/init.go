package main

import (
	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/vxerr"
)

// initCmd is a placeholder until the verb lands.
func (a *app) initCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "init",
		Short: "init (not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return vxerr.Usagef("vx init is not built yet")
		},
	}
}
