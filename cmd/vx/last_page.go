package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/vzn/vx/engine/graphview"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/vxerr"
)

// checkRunPicture refuses what vx last cannot draw or write: a page of a list or of a log, a
// file for either.
func checkRunPicture(format, out string, list, log bool) error {
	if format != "html" && out == "" {
		return nil
	}
	what := "--format html"
	if out != "" {
		what = "--out"
	}
	switch {
	case list:
		return vxerr.Usagef("%s writes a run: leave out --list", what)
	case log:
		return vxerr.Usagef("%s writes a run: leave out --log (vx last --log prints the whole log)", what)
	}
	return nil
}

// runPicture writes the run runID ("" for the latest) to out, or to stdout when out is "": its
// timeline page, or vx last --format json's document under --format json or to a .json file.
func (a *app) runPicture(ctx context.Context, st *store.Store, runID, out string) error {
	format := "html"
	if a.format == "json" || (a.format == "text" && strings.ToLower(filepath.Ext(out)) == ".json") {
		format = "json"
	}
	var write func(io.Writer) error
	var what string
	if format == "html" {
		r, err := graphview.RunTimeline(ctx, st, runID, a.secretsMasker(ctx))
		if err != nil {
			return err
		}
		write, what = r.WriteHTML, fmt.Sprintf("run %s, %d tasks, lanes: %d", r.RunID, len(r.Tasks), r.Lanes)
	} else {
		doc, err := history.LastRun(ctx, st, runID)
		if err != nil {
			return err
		}
		write, what = func(w io.Writer) error { return writeJSON(w, doc) }, "run "+doc.Summary.RunID+", its document"
	}
	if out == "" {
		return write(a.stdout)
	}
	if err := writePicture(out, write); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "vx: wrote %s (%s)\n", out, what)
	return nil
}
