package tools

import (
	"context"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/logtext"
)

type getFailuresArgs struct {
	RunID string `json:"runId" args:"nonempty"`
}

// Failures is getFailures' answer: a run's failed tasks.
type Failures struct {
	// RunID is the run answered; null when no run has failed (then Failures is empty).
	RunID    *string      `json:"runId"`
	Failures []FailedTask `json:"failures"`
}

// FailedTask is one failed task of a run: its output as plain text, cut when long, and the file
// locations the output names.
type FailedTask struct {
	TaskID string `json:"taskId"`
	// Status is failed or timedOut.
	Status string `json:"status"`
	// ExitCode is null when the command was killed (a timeout) or could not start.
	ExitCode *int `json:"exitCode"`
	TimedOut bool `json:"timedOut"`
	logtext.Text
	Locations []Location `json:"locations"`
}

// getFailures answers a run's failed tasks from history.FailedTasks, with the file locations each
// output names. No CLI verb answers this document (`vx last --log` answers one task's output).
func (e *Env) getFailures() Tool {
	return Tool{
		Name:        "getFailures",
		Title:       "Why a run failed",
		Description: "Why did run X fail? Each failed task: taskId, exitCode, timedOut, its output (the first 8 KiB and last 56 KiB, plain text, secrets masked) and the file locations it names. runId: whole or unique prefix; default the latest failed run. Call it after runTasks reports a failure.",
		InputSchema: schema(map[string]any{
			"runId": map[string]any{"type": "string", "minLength": 1, "description": "The run: its whole id or a unique prefix. Leave out for the latest run that failed."},
		}),
		OutputSchema: rawSchema(outObject(map[string]any{
			"runId": outNullable(outString("The run answered (whole id); null when no run has failed.")),
			"failures": outList(outObject(map[string]any{
				"taskId":       outString("project#task."),
				"status":       outString("failed or timedOut."),
				"exitCode":     outNullable(outInt("The command's exit status; null when it was killed or could not start.")),
				"timedOut":     outBool("Killed when its timeout ran out."),
				"output":       outString("What the task printed, plain text, secrets masked; cut in the middle when long."),
				"outputBytes":  outInt("The whole output's length in bytes."),
				"omittedBytes": outInt("Bytes cut from the middle of output (0: it is whole)."),
				"locations": outList(outObject(map[string]any{
					"file": outString("Absolute path of an existing file."),
					"line": outInt("1-based line, when the output said."),
					"col":  outInt("1-based column, when the output said."),
				}, "file"), "The file locations the output names, in order, each once."),
			}, "taskId", "status", "exitCode", "timedOut", "output", "outputBytes", "omittedBytes", "locations"), "The run's failed tasks, in the order they finished."),
		}, "runId", "failures")),
		Annotations: readOnly,
		Handler: func(ctx context.Context, call *Call) (any, error) {
			var args getFailuresArgs
			if err := DecodeArgs(call.Args, &args); err != nil {
				return nil, err
			}
			st, err := e.openState(ctx)
			if err != nil {
				return nil, err
			}
			defer st.Close()
			root, err := e.Loader.Root()
			if err != nil {
				return nil, refusal(err)
			}
			// The config gives each project's folder and the secrets; history does not need it, so
			// a config that does not load costs only the project-relative paths.
			ws, _ := e.Loader.Load(ctx)
			failed, err := history.FailedTasks(ctx, st, args.RunID, e.secretsMasker())
			if err != nil {
				return nil, historyError(err, "the failures of the run")
			}
			out := &Failures{Failures: make([]FailedTask, 0, len(failed.Failures))}
			if failed.RunID != "" {
				out.RunID = &failed.RunID
			}
			for _, f := range failed.Failures {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				// Locations come from the whole output, not only from what the cut keeps.
				out.Failures = append(out.Failures, FailedTask{TaskID: f.TaskID, Status: f.Status, ExitCode: f.ExitCode,
					TimedOut: f.TimedOut, Text: f.Text, Locations: newLocator(root, projectDir(ws, f.TaskID)).parseLocations(f.Plain)})
			}
			return out, nil
		},
	}
}

// projectDir answers the absolute folder of the task's project, "" when the config did not load
// or no longer has the project.
func projectDir(ws *graph.Workspace, taskID string) string {
	if ws == nil {
		return ""
	}
	project, _, _ := graph.SplitTaskID(taskID)
	if p, ok := ws.Project(project); ok {
		return p.AbsDir
	}
	return ""
}
