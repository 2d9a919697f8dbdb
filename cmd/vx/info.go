package main

import (
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/info"
	"github.com/vzn/vx/engine/remote"
)

func (a *app) infoCmd() *cobra.Command {
	var concurrency int
	var concurrencyFlag string
	cmd := &cobra.Command{
		Use:   "info",
		Short: "Show what this workspace is and what a run will use: versions, git, projects, plugins, workers, cache, lock",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("concurrency") {
				n, err := parseConcurrency(concurrencyFlag, runtime.NumCPU())
				if err != nil {
					return err
				}
				concurrency = n
			}
			doc, err := info.Answer(cmd.Context(), a.workspaceLoader(), version, concurrency, a.getenv)
			if err != nil {
				return err
			}
			// vx info (not getWorkspaceInfo, which stays closed-world) asks the remote cache
			// server whether it answers and takes the token, and keeps the answer for the tool.
			if rc, ok := doc.RemoteCache.Value.(remote.Report); ok {
				rc.Check(cmd.Context(), time.Now)
				doc.RemoteCache.Value = rc
			}
			return a.emit(doc, doc.WriteText)
		},
	}
	cmd.Flags().StringVar(&concurrencyFlag, "concurrency", "", "the worker count to report, as a run with this flag would use it: `N` or a share of the CPUs such as 50%")
	return cmd
}
