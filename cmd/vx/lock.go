package main

import (
	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/vxerr"
)

// lockCmd is a placeholder until the verb lands.
func (a *app) lockCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "lock",
		Short: "lock (not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return vxerr.Usagef("vx lock is not built yet")
		},
	}
}
