package main

import (
	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/vxerr"
)

// cacheCmd is a placeholder until the verb lands.
func (a *app) cacheCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "cache",
		Short: "cache (not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return vxerr.Usagef("vx cache is not built yet")
		},
	}
}
