package main

import (
	"github.com/vzn/vx/engine/statedirs"
	"os"
	"sync"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/vzn/vx/actor"
	"github.com/vzn/vx/engine/session"
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
			// What the server keeps between calls; the file watcher starts after the initialize
			// reply, with the tools.
			sess := session.Open(session.Options{Loader: loader, Exe: exe, Environ: a.childEnviron(), Memo: true, KeepChild: true,
				Stderr: a.stderr})
			defer sess.Close()
			deps := &tools.Deps{Session: sess, Stderr: a.stderr, Version: version}
			registry := tools.All(deps) // its tools are built on first use
			// Once the first request is answered (initialize, from process start alone), evaluate
			// the config and build the tools while the client's handshake goes on; the first tool
			// call then finds both ready. A failure here is the first call's answer, not the
			// server's end.
			var warm sync.WaitGroup
			defer warm.Wait()
			// The watcher's warnings once the server has stopped are the stop itself (its git
			// ls-files killed, its fsnotify closed): a session that ends cleanly leaves stderr empty.
			var stopped atomic.Bool
			warn := func(msg string) {
				if !stopped.Load() {
					a.log.Warn().Msg(msg)
				}
			}
			err = actor.Serve(cmd.Context(), actor.Config{
				In:     os.Stdin,
				Out:    out,
				Logger: a.log,
				Tools:  registry,
				AfterFirstFrame: func() {
					warm.Go(func() {
						_ = registry.List(cmd.Context())
						sess.StartWatcher(cmd.Context(), warn)
					})
				},
				Mask:          func(s string) string { return loader.Masker().String(s) },
				ServerName:    "vx",
				ServerVersion: version,
				Instructions:  tools.Instructions,
				Tasks:         true,
			})
			stopped.Store(true)
			if cmd.Context().Err() != nil {
				return nil // SIGTERM or SIGINT: a clean stop
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&stdio, "stdio", true, "serve over stdin and stdout (the default and only transport)")
	return cmd
}

// childEnviron is the environment the server's children start from: its own, with --cache-dir
// passed on as VX_CACHE_DIR (both are read from the workspace root), so that a runTasks run uses
// the server's shared store.
func (a *app) childEnviron() []string {
	env := os.Environ()
	if a.cacheDir != "" {
		env = append(env, statedirs.CacheDirEnv+"="+a.cacheDir)
	}
	return env
}
