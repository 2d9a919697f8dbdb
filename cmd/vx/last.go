package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/logtext"
	"github.com/vzn/vx/engine/mask"
	"github.com/vzn/vx/engine/store"
)

// openState opens the workspace's state folder and the shared store read-only; a broken config
// never hides history (see workspace.Loader.StoreDirs). It creates nothing when there is none.
func (a *app) openState(ctx context.Context) (*store.Store, error) {
	dirs, err := a.workspaceLoader().StoreDirs(ctx)
	if err != nil {
		return nil, err
	}
	st, err := store.OpenReadOnlyShared(ctx, dirs.Checkout, dirs.Shared)
	if err != nil {
		return nil, fmt.Errorf("read the state folder: %w", err)
	}
	return st, nil
}

// taskLog answers the task's log in the run, masked with the secrets of the config when it
// loads; a passing task the config does not cache has no log for that reason.
func (a *app) taskLog(ctx context.Context, st *store.Store, taskID, runID string) (*history.TaskLog, error) {
	ws, err := a.load(ctx)
	var m *mask.Masker
	if err != nil {
		ws = nil
	} else {
		m = mask.New(ws.Secrets...)
	}
	doc, err := history.Log(ctx, st, taskID, runID, m)
	if err != nil {
		return nil, err
	}
	doc.Uncached(ws)
	return doc, nil
}

// secretsMasker masks the secrets of the environment's tasks when the config loads; a log is
// masked when stored, so a config that does not load costs nothing but this second pass.
func (a *app) secretsMasker(ctx context.Context) *mask.Masker {
	if ws, err := a.load(ctx); err == nil {
		return mask.New(ws.Secrets...)
	}
	return nil
}

func (a *app) lastCmd() *cobra.Command {
	var list, full bool
	var logTask, runID, out string
	var limit int
	cmd := &cobra.Command{
		Use:         "last [--list] [--log TASKID] [--run ID] [--format html] [--out FILE]",
		Short:       "Show the last run's summary, recent runs, or a task's log",
		Annotations: map[string]string{formatsAnnotation: "text,json,html"},
		Args:        cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := checkRunPicture(a.format, out, list, logTask != ""); err != nil {
				return err
			}
			st, err := a.openState(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			switch {
			case logTask != "":
				if err := a.checkTaskID(ctx, logTask); err != nil {
					return err
				}
				doc, err := a.taskLog(ctx, st, logTask, runID)
				if err != nil {
					return err
				}
				return a.emit(doc, func(w io.Writer) error {
					if doc.NoLog != "" {
						_, err := fmt.Fprintf(w, "no log of %s in run %s (%s): %s\n", logtext.Escape(doc.TaskID), doc.RunID, doc.Status, doc.NoLog)
						return err
					}
					out := doc.Output
					if full {
						out = doc.Whole()
					}
					_, err := io.WriteString(w, out)
					return err
				})
			case list:
				doc, err := history.List(ctx, st, limit)
				if err != nil {
					return err
				}
				return a.emit(doc, func(w io.Writer) error { return writeRunListText(w, doc) })
			case a.format == "html" || out != "":
				return a.runPicture(ctx, st, runID, out)
			default:
				doc, err := history.LastRun(ctx, st, runID)
				if err != nil {
					return err
				}
				return a.emit(doc, func(w io.Writer) error {
					if err := writeSummaryText(w, doc.Summary, a.colorOn(w)); err != nil {
						return err
					}
					for _, t := range doc.Summary.Tasks {
						fmt.Fprintf(w, "  %-9s %s %s\n", t.Status, logtext.Escape(t.TaskID), ms(t.DurationMs))
					}
					return nil
				})
			}
		},
	}
	f := cmd.Flags()
	f.BoolVar(&list, "list", false, "list recent runs, newest first")
	f.StringVar(&logTask, "log", "", "print the log of `TASKID` (project#task) in the run")
	f.BoolVar(&full, "full", false, "with --log, print the whole log: text answers otherwise keep its first 8 KiB and last 56 KiB")
	f.StringVar(&runID, "run", "", "the run: its `ID` or a unique prefix of it (default: the latest)")
	f.IntVar(&limit, "limit", 0, "how many runs --list shows (1..500, default 20)")
	f.StringVar(&out, "out", "", "write the run to `FILE`: its timeline page (vx last --format json's document under --format json or for a .json name)")
	return cmd
}

func writeRunListText(w io.Writer, runs []history.Invocation) error {
	if len(runs) == 0 {
		_, err := fmt.Fprintln(w, "no run recorded yet")
		return err
	}
	for _, r := range runs {
		fmt.Fprintf(w, "%s  %s  %-11s %3d tasks %3d hit %3d miss %3d failed  %8s  %s\n", r.RunID,
			time.UnixMilli(r.StartedAt).Local().Format("2006-01-02 15:04:05"), r.Status, r.Totals.Tasks, r.Totals.Hits, r.Totals.Misses, r.Totals.Failed,
			ms(r.TotalDurationMs), strings.Join(logtext.EscapeAll(r.Args), " "))
		if len(r.Tags) > 0 {
			fmt.Fprintf(w, "  tags: %s\n", tagsText(r.Tags))
		}
	}
	return nil
}
