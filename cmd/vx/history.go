package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/atomicfile"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/timings"
	"github.com/vzn/vx/engine/workspace"
)

// historyCmd is `vx history`: the timings file that carries the scheduler's history between
// machines (engine/timings).
func (a *app) historyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Carry the durations and peaks the scheduler plans from to another machine (a CI runner)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(withUsage(a.historyExportCmd()), withUsage(a.historyImportCmd()))
	return cmd
}

func (a *app) historyExportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "export FILE",
		Short: "Write each task's p50 duration and peak RSS, as the scheduler plans from them, to FILE",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			doc, err := a.exportTimings(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.emit(doc, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "exported %d tasks to %s (%d bytes)\n", doc.Tasks, doc.File, doc.Bytes)
				return err
			})
		},
	}
}

// exportTimings writes the state folder's estimates to path, without evaluating the config.
func (a *app) exportTimings(ctx context.Context, path string) (timings.Exported, error) {
	st, err := a.openState(ctx)
	if err != nil {
		return timings.Exported{}, err
	}
	defer st.Close()
	ests, err := timings.Estimates(ctx, st)
	if err != nil {
		return timings.Exported{}, err
	}
	doc := timings.Exported{File: path, Tasks: len(ests)}
	err = atomicfile.Write(path, func(w io.Writer) error {
		doc.Bytes, err = timings.Write(w, ests)
		return err
	}, atomicfile.Perm(0o644))
	if err != nil {
		return timings.Exported{}, fmt.Errorf("export to %s: %w", path, err)
	}
	return doc, nil
}

func (a *app) historyImportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "import FILE",
		Short: "Plan from FILE's durations and peaks each task that has not run here; a malformed or missing FILE is refused with a warning, and vx exits 0",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			doc, err := a.importTimings(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if doc.Refused != "" {
				fmt.Fprintf(a.stderr, "vx: warning: history import: %s; nothing imported\n", doc.Refused)
			}
			return a.emit(doc, func(w io.Writer) error {
				if doc.Refused != "" {
					return nil
				}
				_, err := fmt.Fprintf(w, "imported %d tasks from %s: %d added, %d replaced, %d kept (no newer)\n",
					doc.Tasks, doc.File, doc.Added, doc.Replaced, doc.Kept)
				return err
			})
		},
	}
}

// importTimings reads the timings file path and keeps its estimates in the state folder. A file
// that is missing or malformed is refused (Refused says why, by name), not an error: the file only
// orders the work, and a CI job goes on to its run without it.
func (a *app) importTimings(ctx context.Context, path string) (timings.Imported, error) {
	ests, err := readTimings(path)
	var bad *timings.Malformed
	switch {
	case errors.As(err, &bad):
		return timings.Imported{File: path, Refused: bad.Error()}, nil
	case errors.Is(err, fs.ErrNotExist):
		return timings.Imported{File: path, Refused: path + ": no such file"}, nil
	case err != nil:
		return timings.Imported{}, err
	}
	root, err := workspace.FindRoot(a.workDir())
	if err != nil {
		return timings.Imported{}, err
	}
	st, err := store.Open(ctx, workspace.CacheDir(root, a.getenv), store.Options{})
	if err != nil {
		return timings.Imported{}, fmt.Errorf("open the state folder: %w", err)
	}
	defer st.Close()
	return timings.Import(ctx, st, path, ests)
}

// readTimings reads the timings file path.
func readTimings(path string) ([]store.Estimate, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.IsDir() {
		return nil, &timings.Malformed{File: path, Reason: "a folder, not a timings file"}
	}
	return timings.Read(f, path)
}
