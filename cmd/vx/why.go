package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/history"
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
	fmt.Fprintf(w, "%s in run %s: %s (key %s)\n", d.TaskID, d.RunID, d.Status, short(d.Hash))
	if d.PreviousRunID != nil {
		verb := "unchanged since"
		if d.Changed {
			verb = "changed since"
		}
		fmt.Fprintf(w, "key %s run %s (key %s)\n", verb, *d.PreviousRunID, short(deref(d.PreviousHash)))
	}
	fmt.Fprintf(w, "%s\n", d.Reason)
	writeFiles(w, "", d.Diff.Files)
	if d.Diff.Command != nil {
		fmt.Fprintf(w, "  command: %q → %q\n", d.Diff.Command.Before, d.Diff.Command.After)
	}
	if len(d.Diff.Env) > 0 {
		fmt.Fprintf(w, "  env changed: %s\n", strings.Join(d.Diff.Env, ", "))
	}
	for _, s := range d.Diff.Scripts {
		fmt.Fprintf(w, "  script changed: %s\n", s)
	}
	writeFiles(w, "  global", d.Diff.Global)
	writePackages(w, "", d.Diff.Packages)
	for _, p := range d.Diff.Through {
		fmt.Fprintf(w, "  files changed in %s (a dependency without the task)\n", p)
	}
	if d.Diff.Lockfile {
		fmt.Fprintf(w, "  lockfile changed (vx cannot read its format, so it stands for every package)\n")
	}
	for _, u := range d.Diff.Upstream {
		fmt.Fprintf(w, "  upstream %s: %s → %s\n", u.TaskID, orNone(short(u.Before)), orNone(short(u.After)))
	}
	for _, r := range d.Roots {
		fmt.Fprintf(w, "root %s:\n", r.TaskID)
		writeFiles(w, "  ", r.Files)
		if r.Command != nil {
			fmt.Fprintf(w, "    command: %q → %q\n", r.Command.Before, r.Command.After)
		}
		if len(r.Env) > 0 {
			fmt.Fprintf(w, "    env changed: %s\n", strings.Join(r.Env, ", "))
		}
		for _, s := range r.Scripts {
			fmt.Fprintf(w, "    script changed: %s\n", s)
		}
		writePackages(w, "  ", r.Packages)
	}
	return nil
}

func writePackages(w io.Writer, indent string, ps []history.PackageChange) {
	for _, p := range ps {
		fmt.Fprintf(w, "%s  package %s: %s → %s\n", indent, p.Name, orNone(p.Before), orNone(p.After))
	}
}

func writeFiles(w io.Writer, indent string, f history.FileDiff) {
	for _, p := range f.Added {
		fmt.Fprintf(w, "%s  added    %s\n", indent, p)
	}
	for _, p := range f.Removed {
		fmt.Fprintf(w, "%s  removed  %s\n", indent, p)
	}
	for _, p := range f.Modified {
		fmt.Fprintf(w, "%s  modified %s\n", indent, p)
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
