package tools

import (
	"context"
	"math"

	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/tools/window"
)

type getRunHistoryArgs struct {
	Project string   `json:"project" args:"nonempty" jsonschema:"Only this project."`
	Task    string   `json:"task" args:"nonempty" jsonschema:"Only this task name (test), not an id."`
	Limit   *float64 `json:"limit" jsonschema:"Runs to answer: 1..500, clamped (default 20)."`
	RunID   string   `json:"runId" args:"nonempty" jsonschema:"Answer this run's summary and tasks instead."`
	Cursor  string   `json:"cursor" args:"nonempty" jsonschema:"An answer's nextCursor."`
}

// runHistoryAnswer is getRunHistory's answer: recent runs and statistics, or, asked with a run id,
// that run's summary (vx last --run ID --format json), its tasks those that need attention first.
type runHistoryAnswer struct {
	*history.RunHistory
	Run *history.Summary `json:"run,omitempty"`
}

// getRunHistory answers recent runs and per-task statistics from history.History.
func (e *Env) getRunHistory() Tool {
	return Tool{
		Name:         "getRunHistory",
		Title:        "Run history and task statistics",
		Description:  "Which tasks ran recently, and how fast? Recent runs (status, counts, the tasks that did not pass and why) and per task p50Ms/p99Ms, successRate, hitRate, failureMode (flaky: one key passed and failed), maxPeakRssBytes, maxCpuParallelism. With runId: that run's summary and every task. Reads the index only.",
		InputSchema:  inputOf[getRunHistoryArgs](),
		OutputSchema: outputOf[runHistoryAnswer](true, "limit", "runs", "tasks", "omittedTasks"),
		Annotations:  readOnly,
		Handler: func(ctx context.Context, call *Call) (any, error) {
			var args getRunHistoryArgs
			if err := DecodeArgs(call.Args, &args); err != nil {
				return nil, err
			}
			if err := checkTaskName("task", args.Task); err != nil {
				return nil, err
			}
			if args.RunID != "" {
				return e.runHistoryOf(ctx, call, &args)
			}
			opts := history.HistoryOptions{Project: args.Project, Task: args.Task, Limit: history.DefaultLimit}
			if args.Limit != nil {
				// Clamp before converting, so a huge number cannot overflow into a small one.
				opts.Limit = int(math.Max(1, math.Min(*args.Limit, history.MaxLimit)))
			}
			st, err := e.openState(ctx)
			if err != nil {
				return nil, err
			}
			defer st.Close()
			h, err := history.History(ctx, st, opts)
			if err != nil {
				return nil, historyError(err, "run history")
			}
			return e.fit(ctx, call, "getRunHistory", args.Cursor, &runHistoryAnswer{RunHistory: h},
				window.Of("runs", &h.Runs), window.Of("tasks", &h.Tasks))
		},
	}
}

// runHistoryOf answers one run's summary, windowed as runTasks answers it, so that runTasks'
// cursor continues here.
func (e *Env) runHistoryOf(ctx context.Context, call *Call, args *getRunHistoryArgs) (fitted, error) {
	for key, set := range map[string]bool{"project": args.Project != "", "task": args.Task != "", "limit": args.Limit != nil} {
		if set {
			return nil, Refusef("argument %q does not apply with runId: the run's summary lists all its tasks", key)
		}
	}
	st, err := e.openState(ctx)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	s, err := history.Last(ctx, st, args.RunID)
	if err != nil {
		return nil, historyError(err, "the run")
	}
	return e.fit(ctx, call, "getRunHistory", args.Cursor, &runHistoryAnswer{Run: s}, runLists(s)...)
}
