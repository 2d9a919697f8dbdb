package main

import (
	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/vxerr"
)

// lastCmd is a placeholder until the verb lands.
func (a *app) lastCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "last",
		Short: "last (not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return vxerr.Usagef("vx last is not built yet")
		},
	}
}
