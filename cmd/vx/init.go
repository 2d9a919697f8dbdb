package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/agents"
	"github.com/vzn/vx/engine/initplan"
	"github.com/vzn/vx/engine/workspace"
)

func (a *app) initCmd() *cobra.Command {
	var opts initplan.Options
	var hosts []string
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Adopt vx in a JavaScript monorepo: write vx.workspace.ts from Turborepo, Nx or the package scripts",
		Long: `Plan vx's config for the repository here — from Turborepo's config (turbo.json, turbo.jsonc, or
where a script's --root-turbo-json points), from nx.json and project.json, or from the scripts the
packages share — and write it: vx.workspace.ts and, where a project differs or the root runs tasks
of its own, its vx.project.ts. What cannot be translated is listed as a todo naming its file and
key. An existing file is kept unless --force; --dry writes nothing.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("agents") {
				return nil // vx init --agents claude gemini: the hosts
			}
			return cobra.NoArgs(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = a.workDir()
			plan, err := initplan.Init(opts)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("agents") {
				root, err := workspace.FindRoot(opts.Dir)
				if err != nil {
					root = opts.Dir
				}
				ap, err := a.agentsPlan(cmd.Context(), root, agentHosts(hosts, args), opts.Dry, plannedTasks(plan))
				if err != nil {
					return err
				}
				withAgents(plan, ap)
			}
			return a.emit(plan, plan.WriteText)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.Dry, "dry", false, "plan only: print the plan and write nothing")
	f.StringVar(&opts.Mode, "mode", initplan.ModeAuto, "where tasks come from: auto, turbo, nx or scripts")
	f.BoolVar(&opts.Force, "force", false, "replace existing vx config files")
	f.StringSliceVar(&hosts, "agents", nil, "also set up coding agents for vx mcp (as vx agents does): `HOSTS` of "+strings.Join(agents.Hosts(), ",")+"; no value means all (hosts may also follow as arguments)")
	f.Lookup("agents").NoOptDefVal = "all"
	return cmd
}

// agentHosts are the hosts --agents names and those given as arguments after it; "all" alone (the
// flag without a value) yields to the arguments.
func agentHosts(flag, args []string) []string {
	if len(args) > 0 && len(flag) == 1 && flag[0] == "all" {
		return args
	}
	return append(flag, args...)
}
