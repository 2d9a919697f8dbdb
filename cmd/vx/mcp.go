package main

import (
	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/vxerr"
)

// mcpCmd is a placeholder until the verb lands.
func (a *app) mcpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "mcp (not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return vxerr.Usagef("vx mcp is not built yet")
		},
	}
}
