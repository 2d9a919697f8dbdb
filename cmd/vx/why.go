package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/logtext"
)

func (a *app) whyCmd() *cobra.Command {
	var runID string
	cmd := &cobra.Command{
		Use:   "why TASKID [--run ID]",
		Short: "Explain why a task ran (or hit): its key in a run against its previous key",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
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
	fmt.Fprintf(w, "%s in run %s: %s (key %s)\n", esc(d.TaskID), d.RunID, d.Status, short(d.Hash))
	if d.PreviousRunID != nil {
		verb := "unchanged since"
		if d.Changed {
			verb = "changed since"
		}
		fmt.Fprintf(w, "key %s run %s (key %s)\n", verb, *d.PreviousRunID, short(deref(d.PreviousHash)))
	}
	fmt.Fprintf(w, "%s\n", esc(d.Reason))
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
