package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/info"
	"github.com/vzn/vx/engine/workspace"
)

func (a *app) infoCmd() *cobra.Command {
	var concurrency int
	cmd := &cobra.Command{
		Use:   "info",
		Short: "Show what this workspace is and what a run will use: versions, git, projects, plugins, workers, cache, lock",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			root, err := workspace.FindRoot(a.workDir())
			if err != nil {
				return err
			}
			ws, loadErr := a.load(cmd.Context())
			doc, err := info.Info(cmd.Context(), info.Options{
				Version: version, Root: root, ConfigFile: workspace.ConfigFileName,
				Workspace: ws, LoadErr: loadErr, Concurrency: concurrency, Getenv: a.getenv,
				Sections: infoSections(),
			})
			if err != nil {
				return err
			}
			return a.emit(doc, doc.WriteText)
		},
	}
	cmd.Flags().IntVar(&concurrency, "concurrency", 0, "the worker count to report as a run with this flag would use it")
	return cmd
}

// infoSections are the parts of `vx info` other packages answer for.
func infoSections() map[string]func(context.Context, *graph.Workspace) (any, error) {
	return map[string]func(context.Context, *graph.Workspace) (any, error){
		"sandbox": info.Sandbox,
	}
}
