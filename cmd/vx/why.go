package main

import (
	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/vxerr"
)

// whyCmd is a placeholder until the verb lands.
func (a *app) whyCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "why",
		Short: "why (not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return vxerr.Usagef("vx why is not built yet")
		},
	}
}
