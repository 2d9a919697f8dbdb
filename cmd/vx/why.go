package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/logtext"
	"github.com/vzn/vx/engine/vxerr"
)

func (a *app) whyCmd() *cobra.Command {
	var runID string
	cmd := &cobra.Command{
		Use:   "why TASKID [--run ID]",
		Short: "Explain why a task ran (or hit): its key in a run against its previous key",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := a.checkTaskID(ctx, args[0]); err != nil {
				return err
			}
			st, err := a.openState(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			doc, err := history.Explain(ctx, st, args[0], runID)
			if err != nil {
				return err
			}
			return a.emit(doc, func(w io.Writer) error { return writeWhyText(w, doc) })
		},
	}
	cmd.Flags().StringVar(&runID, "run", "", "the run: its `ID` or a unique prefix of it (default: the task's latest)")
	return cmd
}

func writeWhyText(w io.Writer, d *history.Why) error {
	if !d.Found && d.RunID != "" {
		_, err := fmt.Fprintf(w, "%s\n", esc(d.Reason))
		return err
	}
	fmt.Fprintf(w, "%s in run %s: %s (key %s)\n", esc(d.TaskID), d.RunID, d.Status, short(d.Hash))
	if d.PreviousRunID != nil {
		verb := "unchanged since"
		if d.Changed {
			verb = "changed since"
		}
		fmt.Fprintf(w, "key %s run %s (key %s)\n", verb, *d.PreviousRunID, short(deref(d.PreviousHash)))
	}
	fmt.Fprintf(w, "%s\n", esc(d.Reason))
	if d.NotCachedReason != "" {
		fmt.Fprintf(w, "not cached: %s\n", esc(d.NotCachedReason))
	}
	writeFiles(w, "", d.Diff.Files)
	if d.Diff.Command != nil {
		fmt.Fprintf(w, "  command: %q → %q\n", d.Diff.Command.Before, d.Diff.Command.After)
	}
	if len(d.Diff.Env) > 0 {
		fmt.Fprintf(w, "  env changed: %s\n", strings.Join(logtext.EscapeAll(d.Diff.Env), ", "))
	}
	for _, s := range d.Diff.Scripts {
		fmt.Fprintf(w, "  script changed: %s\n", esc(s))
	}
	writeFiles(w, "  global", d.Diff.Global)
	writeRuntime(w, "", d.Diff.Runtime)
	writePackages(w, "", d.Diff.Packages)
	for _, p := range d.Diff.Through {
		fmt.Fprintf(w, "  files changed in %s (a dependency without the task)\n", esc(p))
	}
	if d.Diff.Lockfile {
		fmt.Fprintf(w, "  lockfile changed (vx cannot read its format, so it stands for every package)\n")
	}
	for _, u := range d.Diff.Upstream {
		fmt.Fprintf(w, "  upstream %s: %s → %s\n", esc(u.TaskID), orNone(short(u.Before)), orNone(short(u.After)))
	}
	for _, r := range d.Roots {
		fmt.Fprintf(w, "root %s:\n", esc(r.TaskID))
		writeFiles(w, "  ", r.Files)
		if r.Command != nil {
			fmt.Fprintf(w, "    command: %q → %q\n", r.Command.Before, r.Command.After)
		}
		if len(r.Env) > 0 {
			fmt.Fprintf(w, "    env changed: %s\n", strings.Join(logtext.EscapeAll(r.Env), ", "))
		}
		for _, s := range r.Scripts {
			fmt.Fprintf(w, "    script changed: %s\n", esc(s))
		}
		writePackages(w, "  ", r.Packages)
		writeRuntime(w, "  ", r.Runtime)
		for _, p := range r.DepFiles {
			fmt.Fprintf(w, "    files of upstream project %s changed\n", esc(p))
		}
		for _, p := range r.Through {
			fmt.Fprintf(w, "    files changed in %s (a dependency without the task)\n", esc(p))
		}
	}
	return nil
}

func writePackages(w io.Writer, indent string, ps []history.PackageChange) {
	for _, p := range ps {
		fmt.Fprintf(w, "%s  package %s: %s → %s\n", indent, esc(p.Name), esc(orNone(p.Before)), esc(orNone(p.After)))
	}
}

// writeRuntime prints each runtime probe whose output moved, with its two outputs.
func writeRuntime(w io.Writer, indent string, rs []history.RuntimeChange) {
	for _, r := range rs {
		fmt.Fprintf(w, "%s  runtime %s: %s → %s\n", indent, esc(r.Probe), esc(orNone(r.Before)), esc(orNone(r.After)))
	}
}

func writeFiles(w io.Writer, indent string, f history.FileDiff) {
	for _, p := range f.Added {
		fmt.Fprintf(w, "%s  added    %s\n", indent, esc(p))
	}
	for _, p := range f.Removed {
		fmt.Fprintf(w, "%s  removed  %s\n", indent, esc(p))
	}
	for _, p := range f.Modified {
		fmt.Fprintf(w, "%s  modified %s\n", indent, esc(p))
	}
}

// esc is logtext.Escape: text of the config, the files or the lockfile, printed for people.
func esc(s string) string { return logtext.Escape(s) }

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// checkTaskID refuses a half task id (a task name, a project name, "#build", "app#") where a
// project#task is needed, naming the workspace's tasks it could mean. It loads the config only
// for such an id; a config that does not load leaves the plain refusal.
func (a *app) checkTaskID(ctx context.Context, id string) error {
	if _, _, ok := graph.SplitTaskID(id); ok {
		return nil
	}
	var ids []string
	if ws, err := a.load(ctx); err == nil {
		ids = ws.TaskIDs()
	}
	if hint := taskIDHint(id, ids); hint != "" {
		return &vxerr.UsageError{Msg: hint}
	}
	return vxerr.Usagef("task id %q: want project#task", id)
}

// maxCandidates is how many task ids a refusal names before it counts the rest.
const maxCandidates = 12

// taskIDHint says what the half task id id is and which of ids (sorted) it could mean:
// `"build" is a task name; say which: app#build, lib#build`; "" when it could mean none.
func taskIDHint(id string, ids []string) string {
	project, task, hasHash := strings.Cut(id, "#")
	var kinds, matches []string
	seen := map[string]bool{}
	add := func(kind string, match func(p, t string) bool) {
		found := false
		for _, c := range ids {
			p, t, _ := strings.Cut(c, "#")
			if match(p, t) && !seen[c] {
				seen[c] = true
				matches = append(matches, c)
				found = true
			}
		}
		if found {
			kinds = append(kinds, kind)
		}
	}
	switch {
	case !hasHash:
		add("a task name", func(_, t string) bool { return t == id })
		add("a project", func(p, _ string) bool { return p == id })
	case project == "" && task != "":
		add("a task name with no project", func(_, t string) bool { return t == task })
	case project != "" && task == "":
		add("a project with no task", func(p, _ string) bool { return p == project })
	}
	if len(matches) == 0 {
		return ""
	}
	slices.Sort(matches)
	shown := matches
	more := ""
	if len(shown) > maxCandidates {
		shown, more = shown[:maxCandidates], fmt.Sprintf(" and %d more", len(matches)-maxCandidates)
	}
	return fmt.Sprintf("%q is %s; say which: %s%s", id, strings.Join(kinds, " and "), strings.Join(logtext.EscapeAll(shown), ", "), more)
}
