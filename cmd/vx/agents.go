package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/agents"
	"github.com/vzn/vx/engine/initplan"
	"github.com/vzn/vx/engine/workspace"
)

func (a *app) agentsCmd() *cobra.Command {
	var dry bool
	cmd := &cobra.Command{
		Use:   "agents [host…]",
		Short: "Set up coding agents for vx mcp: " + strings.Join(agents.Hosts(), ", "),
		Long: `Write or merge each host's MCP config for vx mcp (.mcp.json, .cursor/mcp.json, .vscode/mcp.json,
.continue/mcpServers/vx.yaml, .gemini/settings.json, .codex/config.toml), keeping every other server,
key and comment, and an agent guide: vx's section of AGENTS.md, pointers to it in CLAUDE.md and
GEMINI.md, and the Claude Code skill .claude/skills/vx/SKILL.md. No host named means every host;
a second run changes nothing. --dry writes nothing.

Only real files in real folders inside the workspace are read or written: a file or folder that is
a symbolic link, or a file with other names, is refused by name. A merged file keeps its mode, and
every file's new text is parsed back before it replaces the old one.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := workspace.FindRoot(a.workDir())
			if err != nil {
				return err
			}
			plan, err := a.agentsPlan(cmd.Context(), root, args, dry, nil)
			if err != nil {
				return err
			}
			return a.emit(plan, plan.WriteText)
		},
	}
	cmd.Flags().BoolVar(&dry, "dry", false, "plan only: print the plan and write nothing")
	return cmd
}

// agentsPlan plans (and unless dry writes) the hosts' files for the workspace at root. The task
// names and whether mcp() is declared come from the loaded config; where it does not load (vx init
// has just planned it), from planned, the task names the init plan gives.
func (a *app) agentsPlan(ctx context.Context, root string, hosts []string, dry bool, planned []string) (*agents.Plan, error) {
	opts := agents.Options{Root: root, Hosts: hosts, Dry: dry, Tasks: planned}
	if ws, err := a.load(ctx); err == nil {
		opts.DeclaresMCP = ws.MCP != nil
		opts.Tasks = nil
		for _, p := range ws.Projects {
			for name := range p.Tasks {
				if !slices.Contains(opts.Tasks, name) {
					opts.Tasks = append(opts.Tasks, name)
				}
			}
		}
	} else if src, err := os.ReadFile(filepath.Join(root, workspace.ConfigFileName)); err == nil {
		opts.DeclaresMCP = strings.Contains(string(src), "mcp(")
	}
	slices.Sort(opts.Tasks)
	opts.Tasks = slices.Compact(opts.Tasks)
	return agents.Write(opts)
}

// withAgents adds the agents plan to vx init's: its files after the config files, its todos as notes.
func withAgents(plan *initplan.Plan, ap *agents.Plan) {
	for _, f := range ap.Files {
		plan.Files = append(plan.Files, initplan.File{Path: f.Path, Text: f.Text, Status: f.Status})
	}
	plan.Notes = append(plan.Notes, ap.Todos...)
	plan.Derive()
}

// plannedTasks are the task names an init plan gives its projects.
func plannedTasks(plan *initplan.Plan) []string {
	var names []string
	for _, p := range plan.Projects {
		names = append(names, p.Tasks...)
	}
	return names
}
