package tools

import (
	"context"
	"encoding/json"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/actor/tool/window"
	"github.com/vzn/vx/engine/failloc"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/logtext"
	"github.com/vzn/vx/engine/store"
)

type getFailuresArgs struct {
	RunID  string `json:"runId" arg:"nonempty,doc=Run id or unique prefix; default the latest failed run."`
	Cursor string `json:"cursor" arg:"nonempty,doc=nextCursor."`
}

// Failures is getFailures' answer: a run's failed tasks, under the original's tasks.
type Failures struct {
	// RunID is the run answered; null when no run has failed (then Failures is empty).
	RunID    *string      `json:"runId"`
	Failures []FailedTask `json:"tasks"`
	// Store names this checkout's history, which the failures were read from.
	Store history.Store `json:"store"`
}

// FailedTask is one failed task of a run: its output as plain text, cut when long, and the file
// locations the output names.
type FailedTask struct {
	TaskID string `json:"taskId"`
	// Status is failed or timedOut.
	Status store.Status `json:"status"`
	// ExitCode is null when the command was killed (a timeout) or could not start.
	ExitCode *int `json:"exitCode"`
	TimedOut bool `json:"timedOut"`
	logtext.Text
	Locations []Location `json:"locations"`
	// OmittedLocations counts the locations left out so the task keeps to its share of the answer.
	OmittedLocations int `json:"omittedLocations,omitempty"`
}

// Location is a place in a file that a task's output names (failloc.Location, the parser
// getFailures and a CI run's annotations share).
type Location = failloc.Location

// minFailureShare is the least of the answer a failed task gets: past the failures that many
// shares hold, the rest are behind the cursor.
const minFailureShare = 4_000

// getFailures answers a run's failed tasks from history.FailedTasks, with the file locations each
// output names. No CLI verb answers this document (`vx last --log` answers one task's output).
func (d *Deps) getFailures() tool.Tool {
	return tool.New(tool.Tool{
		Name:        "getFailures",
		Title:       "Why a run failed",
		Description: "Why did run X fail? Each failed task: taskId, exitCode, timedOut, its output (head and tail, at most 8 KiB + 56 KiB, sharing the answer; plain text, secrets masked) and the file locations it names. Call it once a run failed.",
		Paged:       true,
		Annotations: readOnly,
	}, func(ctx context.Context, call *tool.Call, args getFailuresArgs) (*Failures, error) {
		st, release, err := d.openState(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
		root, err := d.loader().Root()
		if err != nil {
			return nil, refusal(err)
		}
		// The config gives each project's folder and the secrets; history does not need it, so
		// a config that does not load costs only the project-relative paths.
		ws, _ := d.loader().Load(ctx)
		failed, err := history.FailedTasks(ctx, st, args.RunID, d.secretsMasker())
		if err != nil {
			return nil, historyError(err, "the failures of the run")
		}
		out := &Failures{Failures: make([]FailedTask, 0, len(failed.Failures)), Store: failed.Store}
		if failed.RunID != "" {
			out.RunID = &failed.RunID
		}
		// The failed tasks share the budget: each gets an equal share, at most the reference's
		// 8 KiB head and 56 KiB tail, at least minFailureShare (then the rest wait behind the
		// cursor), its output cut to it in the same 1:7 proportion.
		base, _ := json.Marshal(out)
		share := minFailureShare
		if n := len(failed.Failures); n > 0 {
			share = max(minFailureShare, (d.budget(ctx)-len(base)-window.Reserve)/n-1)
		}
		for _, f := range failed.Failures {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			// Locations come from the whole output, not only from what the cut keeps.
			t := FailedTask{TaskID: f.TaskID, Status: f.Status, ExitCode: f.ExitCode, TimedOut: f.TimedOut,
				Locations: failloc.New(root, projectDir(ws, f.TaskID)).Parse(f.Plain)}
			out.Failures = append(out.Failures, fitFailure(t, f.Plain, share))
		}
		call.Window(ctx, args.Cursor, window.Of("tasks", &out.Failures))
		return out, nil
	})
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

// fitFailure gives t the output plain cut so that t's JSON is at most share characters: its
// locations take at most a quarter of the share, the output the rest, cut in Cut's 1:7 proportion
// and never more than Cut keeps.
func fitFailure(t FailedTask, plain string, share int) FailedTask {
	if js, _ := json.Marshal(t.Locations); len(js) > share/4 {
		keep := len(t.Locations)
		for keep > 0 {
			js, _ := json.Marshal(t.Locations[:keep])
			if len(js) <= share/4 {
				break
			}
			keep = keep * (share / 4) / len(js)
		}
		t.OmittedLocations = len(t.Locations) - keep
		t.Locations = t.Locations[:keep]
	}
	// The output's share does not depend on the locations found, so a config that does not load
	// (no project folders, fewer locations) answers the same output.
	bare := t
	bare.Locations, bare.OmittedLocations = nil, 0
	rest, _ := json.Marshal(bare)
	t.Text = cutOutput(plain, min(share-share/4-len(rest)-16, logtext.HeadBytes+logtext.TailBytes))
	return t
}
