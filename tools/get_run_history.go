package tools

import (
	"context"
	"math"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/summary"
)

type getRunHistoryArgs struct {
	Project string   `json:"project" arg:"nonempty,doc=Only this project."`
	Task    string   `json:"task" arg:"nonempty,doc=Only this task name (test), not an id."`
	Limit   *float64 `json:"limit" arg:"doc=Runs to answer: 1..500, clamped (default 50)."`
	RunID   string   `json:"runId" arg:"nonempty,doc=Answer this run's summary and tasks instead."`
	Cursor  string   `json:"cursor" arg:"nonempty,doc=nextCursor."`
}

// runHistoryAnswer is getRunHistory's answer: recent runs and statistics, or, asked with a run id,
// that run's summary (vx last --run ID --format json), its tasks those that need attention first.
type runHistoryAnswer struct {
	*history.RunHistory
	Run *summary.Summary `json:"run,omitempty"`
	// Graph names the vx command that draws the run (the latest one) as a timeline page.
	Graph string `json:"graph,omitempty"`
}

// getRunHistory answers recent runs and per-task statistics from history.History.
func (d *Deps) getRunHistory() tool.Tool {
	return tool.New(tool.Tool{
		Name:        "getRunHistory",
		Title:       "Run history and task statistics",
		Description: "Which tasks ran recently, and how fast? Totals; recent runs (status, counts, what did not pass); per task p50Ms/p99Ms, successRate, hitRate, failureMode (flaky: a key passed and failed), maxPeakRssBytes, maxCpuParallelism, latest first.",
		Paged:       true,
		Optional:    []string{"limit", "totals", "invocations", "runs", "history", "omittedTasks", "store"},
		Annotations: readOnly,
	}, func(ctx context.Context, call *tool.Call, args getRunHistoryArgs) (*runHistoryAnswer, error) {
		if err := checkTaskName("task", args.Task); err != nil {
			return nil, err
		}
		if args.RunID != "" {
			return d.runHistoryOf(ctx, call, &args)
		}
		opts := history.HistoryOptions{Project: args.Project, Task: args.Task, Limit: history.HistoryLimit}
		if args.Limit != nil {
			// Clamp before converting, so a huge number cannot overflow into a small one.
			opts.Limit = int(math.Max(1, math.Min(*args.Limit, history.MaxLimit)))
		}
		st, release, err := d.openState(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
		h, err := history.History(ctx, st, opts)
		if err != nil {
			return nil, historyError(err, "run history")
		}
		ans := &runHistoryAnswer{RunHistory: h}
		if len(h.Runs) > 0 {
			ans.Graph = runGraphHint(h.Runs[0].RunID)
		}
		call.Window(ctx, args.Cursor, historyLists(h, args.Project == "" && args.Task == "" && args.Limit == nil)...)
		return ans, nil
	})
}

// runHistoryOf answers one run's summary, windowed as runTasks answers it, so that runTasks'
// cursor continues here.
func (d *Deps) runHistoryOf(ctx context.Context, call *tool.Call, args *getRunHistoryArgs) (*runHistoryAnswer, error) {
	for key, set := range map[string]bool{"project": args.Project != "", "task": args.Task != "", "limit": args.Limit != nil} {
		if set {
			return nil, tool.Refusef("argument %q does not apply with runId: the run's summary lists all its tasks", key)
		}
	}
	st, release, err := d.openState(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	s, err := history.Last(ctx, st, args.RunID)
	if err != nil {
		return nil, historyError(err, "the run")
	}
	call.Window(ctx, args.Cursor, runLists(s)...)
	return &runHistoryAnswer{Run: s, Graph: runGraphHint(s.RunID)}, nil
}
