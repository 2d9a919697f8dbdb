package main

import (
	"os"
	"sync"

	"github.com/spf13/cobra"

	"github.com/vzn/vx/actor"
	"github.com/vzn/vx/engine/vxerr"
	"github.com/vzn/vx/tools"
)

func (a *app) mcpCmd() *cobra.Command {
	var stdio bool
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve this workspace's tasks, cache and run history to coding agents over MCP (stdio)",
		Long: `vx mcp is a Model Context Protocol server over stdio: newline-delimited JSON-RPC 2.0 on
stdin and stdout. Point an agent at it, e.g. for Claude Code a .mcp.json at the workspace root:

  { "mcpServers": { "vx": { "command": "vx", "args": ["mcp"] } } }

Everything but the replies goes to stderr. The config is evaluated per call, so an edited
vx.workspace.ts is seen on the next call without a restart.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !stdio {
				return vxerr.Usagef("vx mcp speaks only stdio (--stdio, the default)")
			}
			// From here on nothing but the server's writer can reach the reply stream: fd 1 points
			// at stderr for the rest of the process and its children.
			out, err := actor.GuardStdout()
			if err != nil {
				return err
			}
			defer out.Close()
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			loader := a.workspaceLoader()
			// Evaluate the config while the client's handshake is under way; the first tool call
			// then finds it ready. A failure here is the first call's answer, not the server's end.
			var warm sync.WaitGroup
			warm.Add(1)
			go func() {
				defer warm.Done()
				_, _ = loader.Load(cmd.Context())
			}()
			defer warm.Wait()
			deps := &tools.Deps{Loader: loader, Exe: exe, Getenv: a.getenv, Environ: os.Environ(), Stderr: a.stderr, Version: version}
			err = actor.Serve(cmd.Context(), actor.Config{
				In:            os.Stdin,
				Out:           out,
				Logger:        a.log,
				Tools:         tools.All(deps),
				Mask:          func(s string) string { return loader.Masker().String(s) },
				ServerName:    "vx",
				ServerVersion: version,
			})
			if cmd.Context().Err() != nil {
				return nil // SIGTERM or SIGINT: a clean stop
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&stdio, "stdio", true, "serve over stdin and stdout (the default and only transport)")
	return cmd
}
