// Package report writes a finished run for continuous integration: the Markdown report of a job's
// summary (vx run --report=markdown, $GITHUB_STEP_SUMMARY) and the `::error` annotations GitHub
// Actions shows on the lines a failure names. Both read the run's summary and its failures as
// getFailures finds them: each failed task's output from the index, and the file locations the
// one parser (engine/failloc) finds in it.
package report

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vzn/vx/engine/failloc"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/mask"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
)

// Failure is one task of a run that did not pass, with what it printed and the places it names.
type Failure struct {
	TaskID   string
	Status   store.Status
	ExitCode *int
	// Plain is its output as plain text, secrets masked.
	Plain string
	// Locations are the places its output names, as failloc finds them, each file relative to
	// the repository root (slash-separated).
	Locations []Location
}

// Location is a place a failure names: a file relative to the repository root, its 1-based line
// and column (0 when the output did not say), and the output line that named it.
type Location struct {
	File      string
	Line, Col int
	Message   string
}

// Run is what a report is made of: the run's summary and its failures in the order they finished.
type Run struct {
	Summary  *summary.Summary
	Failures []Failure
}

// Failures reads the failures of the run sum names from the index st, in the order they ended
// (what failed first, first): each one's output (masked by m) and the locations getFailures finds
// in it, made relative to repoRoot (the workspace root when "").
func Failures(ctx context.Context, st *store.Store, ws *graph.Workspace, repoRoot string, sum *summary.Summary, m *mask.Masker) ([]Failure, error) {
	if sum.RunID == "" || sum.Totals.Failed == 0 {
		return nil, nil
	}
	failed, err := history.FailedTasks(ctx, st, sum.RunID, m)
	if err != nil {
		return nil, fmt.Errorf("read the failures of run %s: %w", sum.RunID, err)
	}
	ended, err := endTimes(ctx, st, failed.RunID)
	if err != nil {
		return nil, err
	}
	if repoRoot == "" {
		repoRoot = ws.Root
	}
	var out []Failure
	for _, f := range failed.Failures {
		out = append(out, Failure{TaskID: f.TaskID, Status: f.Status, ExitCode: f.ExitCode, Plain: f.Plain,
			Locations: relativeLocations(failloc.New(ws.Root, projectDir(ws, f.TaskID)).Findings(f.Plain), repoRoot)})
	}
	// The index answers them in dependency order; the reader wants the first to fail first.
	slices.SortStableFunc(out, func(a, b Failure) int { return ended[a.TaskID].Compare(ended[b.TaskID]) })
	return out, nil
}

// endTimes answers when each task of the run ended: its start and its duration, as recorded.
func endTimes(ctx context.Context, st *store.Store, runID string) (map[string]time.Time, error) {
	execs, err := st.FailedExecutions(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("read the failures of run %s: %w", runID, err)
	}
	out := make(map[string]time.Time, len(execs))
	for _, e := range execs {
		out[e.TaskID] = e.Started.Add(e.Duration)
	}
	return out, nil
}

// projectDir is the folder of the task's project, "" when the workspace has no such project.
func projectDir(ws *graph.Workspace, taskID string) string {
	project, _, _ := graph.SplitTaskID(taskID)
	if p, ok := ws.Project(project); ok {
		return p.AbsDir
	}
	return ""
}

// relativeLocations makes each finding's file relative to root; a file outside it keeps its
// absolute path.
func relativeLocations(found []failloc.Finding, root string) []Location {
	out := make([]Location, 0, len(found))
	for _, f := range found {
		file := f.File
		if rel, err := filepath.Rel(root, f.File); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			file = filepath.ToSlash(rel)
		}
		out = append(out, Location{File: file, Line: f.Line, Col: f.Col, Message: f.Message})
	}
	return out
}

// verdict says how a failure ended: "failed with exit code 3", "timed out", "failed".
func verdict(f Failure) string {
	switch {
	case f.Status == store.StatusTimedOut:
		return "timed out"
	case f.ExitCode != nil:
		return fmt.Sprintf("failed with exit code %d", *f.ExitCode)
	}
	return "failed"
}
