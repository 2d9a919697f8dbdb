package tools

import (
	"context"
	"math"

	"github.com/vzn/vx/engine/history"
)

type getRunHistoryArgs struct {
	Project string   `json:"project" args:"nonempty"`
	Task    string   `json:"task" args:"nonempty"`
	Limit   *float64 `json:"limit"`
}

// getRunHistory answers recent runs and per-task statistics from history.History.
func (e *Env) getRunHistory() Tool {
	nullInt := func(desc string) map[string]any { return outNullable(outInt(desc)) }
	nullNum := func(desc string) map[string]any { return outNullable(outNumber(desc)) }
	names := func(desc string) map[string]any { return outList(map[string]any{"type": "string"}, desc) }
	return Tool{
		Name:        "getRunHistory",
		Title:       "Run history and task statistics",
		Description: "Which tasks ran recently, and how fast? Recent runs (status, exitCode, counts, the tasks that did not pass and why) and per task p50Ms/p99Ms, successRate, hitRate, failureMode (flaky: one key both passed and failed), maxPeakRssBytes, maxCpuParallelism. Call it to find slow or flaky tasks. limit 1..500, clamped and reported. Reads the index only.",
		InputSchema: schema(map[string]any{
			"project": map[string]any{"type": "string", "minLength": 1, "description": "Only runs and tasks of this project."},
			"task":    map[string]any{"type": "string", "minLength": 1, "description": "Only this task name (e.g. test), in every project; not a project#task."},
			"limit":   map[string]any{"type": "number", "description": "The most recent runs to answer: 1..500, clamped (default 20)."},
		}),
		OutputSchema: rawSchema(outObject(map[string]any{
			"limit": outInt("The limit applied: a list of runs this long may have been cut."),
			"runs": outList(outObject(map[string]any{
				"runId":     outString("The run's id (vx last --list prints it)."),
				"status":    outString("ok, failed, cancelled, running or interrupted."),
				"ok":        outBool("Whether the run succeeded."),
				"exitCode":  outInt("vx run's exit status."),
				"startedAt": outString("RFC 3339."),
				"wallMs":    outInt("The run's wall time."),
				"counts":    map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "integer"}, "description": "The run's tasks (in the scope) by status."},
				"tasks": outList(outObject(map[string]any{
					"taskId":            outString("project#task."),
					"status":            outString("hit, miss, failed, timedOut, blocked, skipped or cancelled."),
					"exitCode":          nullInt("The command's exit status; null when it did not run or was killed."),
					"durationMs":        outInt("How long it took."),
					"hash":              outString("Its cache key (empty when never computed)."),
					"blockedBy":         outString("The failed task that kept it from running."),
					"timedOut":          outBool("Killed when its timeout ran out."),
					"sandboxViolations": names("What it did outside its sandbox."),
					"notReady":          names("For a skipped task: the tasks it still waited for."),
				}, "taskId", "status", "exitCode", "durationMs", "hash"), "All the run's tasks (in the scope) when at most 25, else those that did not pass (at most 50)."),
				"omittedTasks": outInt("The run's tasks left out of tasks."),
			}, "runId", "status", "ok", "exitCode", "startedAt", "wallMs", "counts", "tasks", "omittedTasks"), "Recent runs, newest first."),
			"tasks": outList(outObject(map[string]any{
				"taskId":            outString("project#task."),
				"executions":        outInt("Executions in the runs answered."),
				"p50Ms":             nullInt("Median duration of the executions that ran the command and passed; null when none did."),
				"p99Ms":             nullInt("99th percentile of the same."),
				"successRate":       nullNum("Passes over executions that reached a verdict, 0..1."),
				"hitRate":           nullNum("Hits over executions that consulted the cache, 0..1."),
				"failureMode":       outNullable(outString("flaky, timeout or deterministic; null when it never failed.")),
				"maxPeakRssBytes":   outInt("The largest peak RSS an execution showed (0: lighter than vx could see)."),
				"maxCpuParallelism": outNumber("The largest CPU time over wall time an execution showed."),
				"lastStatus":        outString("Its status in the newest run answered."),
			}, "taskId", "executions", "p50Ms", "p99Ms", "successRate", "hitRate", "failureMode", "maxPeakRssBytes", "maxCpuParallelism"),
				"Statistics per task: failing tasks first, then the slowest; at most 100."),
			"omittedTasks": outInt("Tasks whose statistics were left out: narrow with project or task to see them."),
		}, "limit", "runs", "tasks", "omittedTasks")),
		Annotations: readOnly,
		Handler: func(ctx context.Context, call *Call) (any, error) {
			var args getRunHistoryArgs
			if err := DecodeArgs(call.Args, &args); err != nil {
				return nil, err
			}
			if err := checkTaskName("task", args.Task); err != nil {
				return nil, err
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
			return h, nil
		},
	}
}
