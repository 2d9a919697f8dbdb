package main

import (
	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/initplan"
)

func (a *app) initCmd() *cobra.Command {
	var opts initplan.Options
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Adopt vx in a JavaScript monorepo: write vx.workspace.ts from Turborepo, Nx or the package scripts",
		Long: `Plan vx's config for the repository here — from Turborepo's config (turbo.json, turbo.jsonc, or
where a script's --root-turbo-json points), from nx.json and project.json, or from the scripts the
packages share — and write it: vx.workspace.ts and, where a project differs or the root runs tasks
of its own, its vx.project.ts. What cannot be translated is listed as a todo naming its file and
key. An existing file is kept unless --force; --dry writes nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Dir = a.workDir()
			plan, err := initplan.Init(opts)
			if err != nil {
				return err
			}
			return a.emit(plan, plan.WriteText)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.Dry, "dry", false, "plan only: print the plan and write nothing")
	f.StringVar(&opts.Mode, "mode", initplan.ModeAuto, "where tasks come from: auto, turbo, nx or scripts")
	f.BoolVar(&opts.Force, "force", false, "replace existing vx config files")
	return cmd
}
