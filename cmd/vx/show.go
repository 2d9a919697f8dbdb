package main

import (
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/runrequest"
	"github.com/vzn/vx/engine/show"
	"github.com/vzn/vx/engine/workspace"
)

// selectFlags are the selection flags every selecting verb shares.
type selectFlags struct {
	filters  []string
	excludes []string
	affected string
}

const affectedDefault = "\x00default"

func (f *selectFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.filters, "filter", "F", nil, "narrow to projects: a name, a glob, tag:NAME, ./PATH or {PATH} (project folders), [REF] (changed since REF); "+
		"NAME... adds its dependencies, ...NAME its dependents, NAME^... and ...^NAME only those; !F excludes; repeatable")
	fl.StringArrayVar(&f.excludes, "exclude", nil, "leave out the projects `F` selects, as --filter '!F' does; repeatable")
	fl.StringVar(&f.affected, "affected", "", "narrow to projects with files changed since the merge-base with `REF` (default: env VX_AFFECTED_BASE, else affectedBase in vx.workspace.ts, else the default branch), uncommitted and untracked files, and their dependents; naming tasks, to the tasks a file of whose own inputs changed, and the tasks depending on them")
	fl.Lookup("affected").NoOptDefVal = affectedDefault
}

// selectOptions converts the flags to selection options: --exclude F is the filter !F, and the
// folders the filters name are read from the working folder, not the root.
func (a *app) selectOptions(ws *graph.Workspace, f *selectFlags) (workspace.SelectOptions, error) {
	filters := append([]string(nil), f.filters...)
	for _, x := range f.excludes {
		filters = append(filters, "!"+x)
	}
	if rel, ok := a.relDir(ws); ok {
		var err error
		if filters, err = workspace.RebaseFilters(filters, rel); err != nil {
			return workspace.SelectOptions{}, err
		}
	}
	opts := workspace.SelectOptions{Filters: filters}
	if f.affected != "" {
		opts.Affected = true
		if f.affected != affectedDefault {
			opts.AffectedRef = f.affected
		} else {
			// Over the config's affectedBase, under the flag's own ref.
			opts.AffectedRef = a.getenv(runrequest.AffectedBaseEnv)
		}
	}
	return opts, nil
}

// relDir is the working folder relative to the workspace root, slash-separated; ok is false
// when it lies outside (-C names a folder of another tree, say).
func (a *app) relDir(ws *graph.Workspace) (string, bool) {
	wd, err := filepath.Abs(a.workDir())
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(ws.Root, wd)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		// The same folder may be spelled through a symbolic link.
		root, rerr := filepath.EvalSymlinks(ws.Root)
		real, werr := filepath.EvalSymlinks(wd)
		if rerr != nil || werr != nil {
			return "", false
		}
		if rel, err = filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", false
		}
	}
	return filepath.ToSlash(rel), true
}

// folderProject is the project whose folder holds the working folder (the deepest one), nil at
// the workspace root, outside every project, or in the root project alone.
func (a *app) folderProject(ws *graph.Workspace) *graph.Project {
	rel, ok := a.relDir(ws)
	if !ok || rel == "." {
		return nil
	}
	var best *graph.Project
	for _, p := range ws.Projects {
		if p.Dir == "." || (rel != p.Dir && !strings.HasPrefix(rel, p.Dir+"/")) {
			continue
		}
		if best == nil || len(p.Dir) > len(best.Dir) {
			best = p
		}
	}
	return best
}

func (a *app) showCmd() *cobra.Command {
	var sel selectFlags
	cmd := &cobra.Command{
		Use:   "show [target] [-- ARGS…]",
		Short: "Show the resolved workspace, a project, a project#task, or a task name across projects",
		Long: `Show the resolved workspace, a project, a project#task, or a task name across projects.
After --, the arguments vx run would append to the target task's command: its command is shown with them.`,
		Args: func(cmd *cobra.Command, args []string) error {
			target, _ := splitAtDash(cmd, args)
			return cobra.MaximumNArgs(1)(cmd, target)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			args, pass := splitAtDash(cmd, args)
			ws, err := a.load(cmd.Context())
			if err != nil {
				return err
			}
			if ws, err = showArgs(ws, firstOr(args), pass); err != nil {
				return err
			}
			so, err := a.selectOptions(ws, &sel)
			if err != nil {
				return err
			}
			opts := show.Options{Select: so, Getenv: a.getenv}
			if len(args) == 1 {
				opts.Target = args[0]
			}
			doc, err := show.Show(cmd.Context(), ws, opts)
			if err != nil {
				return err
			}
			return a.emit(doc.Original(), doc.WriteText)
		},
	}
	sel.register(cmd)
	cmd.SetUsageFunc(leafUsage)
	return cmd
}

// firstOr is args' first element, "" when there is none.
func firstOr(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}
