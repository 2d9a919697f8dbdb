package tools

import (
	"context"

	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/store"
)

type getTaskLogArgs struct {
	TaskID string `json:"taskId" args:"required,nonempty"`
	RunID  string `json:"runId" args:"nonempty"`
}

// getTaskLog answers what a task printed in a run: history.Log's document, `vx last --log TASKID
// [--run ID] --format json`.
func (e *Env) getTaskLog() Tool {
	return Tool{
		Name:        "getTaskLog",
		Title:       "What a task printed",
		Description: "What did task X print? vx last --log's answer: runId, taskId, status, source (failure, cache, or null when none was kept) and output (plain text, secrets masked). runId defaults to the latest run that recorded the task.",
		InputSchema: schema(map[string]any{
			"taskId": map[string]any{"type": "string", "minLength": 1, "pattern": "^[^#]+#.+$", "description": "The task id, project#task (e.g. app#test)."},
			"runId":  map[string]any{"type": "string", "minLength": 1, "description": "The run: its whole id or a unique prefix. Leave out for the latest run that recorded the task."},
		}, "taskId"),
		OutputSchema: rawSchema(outObject(map[string]any{
			"runId":        outString("The run (whole id)."),
			"taskId":       outString("project#task."),
			"status":       outString("The task's status in that run: hit, miss, failed, timedOut, blocked, skipped or cancelled."),
			"source":       outNullable(outString("failure, cache, or null when vx kept no log.")),
			"output":       outString("What the task printed, plain text, secrets masked; cut in the middle when long."),
			"outputBytes":  outInt("The whole output's length in bytes."),
			"omittedBytes": outInt("Bytes cut from the middle of output (0: it is whole)."),
		}, "runId", "taskId", "status", "source", "output", "outputBytes", "omittedBytes")),
		Annotations: readOnly,
		Handler: func(ctx context.Context, call *Call) (any, error) {
			var args getTaskLogArgs
			if err := DecodeArgs(call.Args, &args); err != nil {
				return nil, err
			}
			return taskQuery(ctx, e, args.TaskID, "the log of", func(st *store.Store) (*history.TaskLog, error) {
				return history.Log(ctx, st, args.TaskID, args.RunID, e.secretsMasker())
			})
		},
	}
}
