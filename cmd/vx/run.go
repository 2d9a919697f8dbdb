package main

import (
	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/vxerr"
)

// runCmd is a placeholder until the verb lands.
func (a *app) runCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "run",
		Short: "run (not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return vxerr.Usagef("vx run is not built yet")
		},
	}
}
