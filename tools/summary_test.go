package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/engine/session"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
	"github.com/vzn/vx/engine/workspace"
	"github.com/vzn/vx/proc"
)

// runSummary is a run summary of n build tasks, the first failed of them failed with exit code 1.
func runSummary(n, failed int) *summary.Summary {
	s := &summary.Summary{RunID: "01m8qd8ypt3358ys9cvxemkwnb", OK: failed == 0, Status: "ok"}
	local := "local"
	for i := range n {
		id := fmt.Sprintf("p%04d#build", i)
		s.Requested = append(s.Requested, id)
		t := summary.TaskResult{TaskID: id, Status: store.StatusHit, Hash: strings.Repeat("a", 64), CacheSource: &local,
			SandboxViolations: []string{}, NotReady: []string{}, SavedMs: 800}
		if i >= n-failed { // the failures finish last: a summary still lists them first
			code := 1
			t.Status, t.CacheSource, t.ExitCode = store.StatusFailed, nil, &code
			s.Totals.Failed++
		} else {
			s.Totals.Hits++
		}
		s.Tasks = append(s.Tasks, t)
	}
	s.Totals.Tasks = n
	if failed > 0 {
		s.Status, s.ExitCode = "failed", 1
	}
	return s
}

// runTasks' default answer for a run of 1,000 hits is a summary of at most 2 KB; for a run with
// three failures it names the three with their exit codes and says to call getFailures.
func TestRunAnswerIsASummaryFirst(t *testing.T) {
	answer := func(s *summary.Summary) string {
		ans := &RunAnswer{Summary: s}
		ans.Next = runNext(s)
		run := tool.New(tool.Tool{Name: "runTasks"}, func(ctx context.Context, call *tool.Call, _ json.RawMessage) (*RunAnswer, error) {
			windowRunAnswer(ctx, call, ans)
			return ans, nil
		})
		js, err := run.Call(context.Background(), &tool.Call{Args: json.RawMessage(`{"tasks":["build"]}`)})
		if err != nil {
			t.Fatal(err)
		}
		return string(js)
	}
	hits := answer(runSummary(1000, 0))
	if len(hits) > 2000 || !strings.Contains(hits, `"hits":1000`) || !strings.Contains(hits, `"nextCursor"`) {
		t.Errorf("the answer for 1,000 hits is %d bytes: %s", len(hits), hits)
	}
	failed := answer(runSummary(1000, 3))
	for i := 997; i < 1000; i++ {
		if !strings.Contains(failed, fmt.Sprintf(`"taskId":"p%04d#build","status":"failed"`, i)) {
			t.Errorf("the answer does not name p%04d#build as failed: %.600s", i, failed)
		}
	}
	if strings.Count(failed, `"exitCode":1`) < 4 || !strings.Contains(failed, "call getFailures") || len(failed) > 4000 {
		t.Errorf("the answer for a run with 3 failures (%d bytes): %s", len(failed), failed)
	}
	// A small run is answered whole (no page fields), its failure first.
	var small struct {
		Summary struct {
			Tasks []summary.TaskResult `json:"tasks"`
		} `json:"summary"`
		NextCursor *string `json:"nextCursor"`
		Total      *int    `json:"total"`
	}
	if err := json.Unmarshal([]byte(answer(runSummary(10, 1))), &small); err != nil {
		t.Fatal(err)
	}
	if len(small.Summary.Tasks) != 10 || small.Summary.Tasks[0].TaskID != "p0009#build" || small.NextCursor != nil || small.Total != nil {
		t.Errorf("a run of 10 tasks: %d tasks, first %s, cursor %v, total %v; want all 10, the failure first, no page fields",
			len(small.Summary.Tasks), small.Summary.Tasks[0].TaskID, small.NextCursor, small.Total)
	}
}

// What runTasks makes of what its child printed: a summary (decoded once), with the message only
// where the summary's exit code is not the child's; no JSON object, a cut one or two of them is no
// summary, and the child's message (or a sentence saying there was none) stands; an object that
// is not a summary is an error.
func TestRunAnswerOfWhatTheChildPrinted(t *testing.T) {
	d := testDeps(t, session.Options{Loader: workspace.NewLoader(workspace.Options{Dir: t.TempDir()})})
	doc, _ := json.Marshal(runSummary(3, 1))
	for _, tc := range []struct {
		name, stdout, msg string
		code              int
		summary           bool
		wantErr, message  string
	}{
		{name: "a summary", stdout: string(doc), code: 1, summary: true},
		{name: "a summary the exit code belies", stdout: string(doc), code: 2, msg: "vx: interrupted", summary: true, message: "vx: interrupted"},
		{name: "nothing", code: 2, msg: "unknown task bulid", message: "unknown task bulid"},
		{name: "nothing and no message", code: 3, message: "vx run exited 3 with no summary and no message"},
		{name: "not JSON", stdout: "hello", code: 1, msg: "m", message: "m"},
		{name: "cut short", stdout: string(doc[:len(doc)/2]), code: 1, msg: "m", message: "m"},
		{name: "two documents", stdout: string(doc) + string(doc), code: 1, msg: "m", message: "m"},
		{name: "not a summary", stdout: `{"tasks":"many"}`, code: 1, wantErr: "the run summary"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ans, err := d.answer(proc.Result{ExitCode: tc.code}, []byte(tc.stdout), tc.msg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (ans.Summary != nil) != tc.summary || ans.Error != tc.message || ans.ExitCode != tc.code {
				t.Fatalf("summary %v, error %q, exit %d", ans.Summary != nil, ans.Error, ans.ExitCode)
			}
			if tc.summary && (len(ans.Summary.Tasks) != 3 || ans.Summary.ExitCode != 1) {
				t.Fatalf("the summary: %+v", ans.Summary)
			}
		})
	}
}
