package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/engine/runner"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
)

// hitRun is the summary of a run of n tasks that all hit, and of failed more that failed.
func hitRun(n, failed int) *summary.Summary {
	at := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	run := store.Run{ID: store.NewRunID(at), Status: store.RunOK, Started: at, Finished: at.Add(40 * time.Millisecond),
		MemoryBudget: 25 << 30, MemorySource: "machine"}
	var execs []store.Execution
	for i := range n + failed {
		id := fmt.Sprintf("p%d#build", i)
		run.Requested = append(run.Requested, id)
		e := store.Execution{TaskID: id, Status: store.StatusHit, Hash: strings.Repeat("c7", 32), CacheSource: "local",
			Duration: time.Duration(i%2) * time.Millisecond, Saved: 9 * time.Millisecond, ReservedBytes: 4 << 20}
		if i >= n {
			code := 1
			e.Status, e.ExitCode, e.CacheSource, e.Saved, e.PeakRSSBytes = store.StatusFailed, &code, "", 0, 40<<20
			run.Status, run.ExitCode = store.RunFailed, 1
		}
		execs = append(execs, e)
	}
	return summary.Summarize(run, execs)
}

// runAnswerJSON answers runTasks' answer of s as the tool writes it, windowed.
func runAnswerJSON(t *testing.T, s *summary.Summary) string {
	t.Helper()
	tl := tool.New(tool.Tool{Name: "runTasks", Paged: true}, func(ctx context.Context, call *tool.Call, _ struct{}) (*RunAnswer, error) {
		ans := &RunAnswer{ExitCode: s.ExitCode, Summary: s, Next: runNext(s)}
		windowRunAnswer(ctx, call, ans)
		return ans, nil
	})
	out, err := tl.Call(context.Background(), &tool.Call{Args: json.RawMessage(`{}`), Budget: func(context.Context) int { return 40_000 }})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// The rows of tasks that passed or hit carry only the task id, status, duration and cache source,
// none of them empty; a failed row keeps everything. An all-hit answer is under 600 characters at
// 4 tasks and at 1,000 (whose rows are then behind the cursor).
func TestRunTasksRowsAreLean(t *testing.T) {
	got := runAnswerJSON(t, hitRun(4, 0))
	for _, want := range []string{`{"taskId":"p0#build","status":"hit","cacheSource":"local"}`, `{"taskId":"p1#build","status":"hit","durationMs":1,"cacheSource":"local"}`,
		`"totals":{"tasks":4,"hits":4,"wallMs":40,"savedMs":36}`} {
		if !strings.Contains(got, want) {
			t.Errorf("the answer lacks %s: %s", want, got)
		}
	}
	for _, lean := range []string{"hash", "reservedBytes", "peakRssBytes", "null", "[]", "exitCode\":0,\"blockedBy"} {
		if strings.Contains(got, lean) {
			t.Errorf("an all-hit answer holds %s: %s", lean, got)
		}
	}
	if len(got) > 600 {
		t.Errorf("an all-hit runTasks of 4 tasks is %d characters, over 600: %s", len(got), got)
	}
	if got := runAnswerJSON(t, hitRun(1000, 0)); len(got) > 600 {
		t.Errorf("an all-hit runTasks of 1,000 tasks is %d characters, over 600: %s", len(got), got)
	}
	got = runAnswerJSON(t, hitRun(3, 1))
	if !strings.Contains(got, `{"taskId":"p3#build","status":"failed","hash":"`+strings.Repeat("c7", 32)+`","durationMs":1,"cacheSource":null,"exitCode":1,"blockedBy":null,"timedOut":false,"sandboxViolations":[],"notReady":[],"peakRssBytes":41943040,`) {
		t.Errorf("a failed row is not whole: %s", got)
	}
}

// planTasks' rows of predicted hits carry only the task id, the predicted status and the p50; a
// predicted miss keeps everything, its id under the original's name too; the plan carries the
// original's predicted.
func TestPlanTasksRowsAreLean(t *testing.T) {
	p50 := int64(9)
	plan := &runner.Plan{Workers: 2, WallMs: 5, WorkMs: 7, CriticalPath: []string{"a#build"}, Tasks: []runner.PlanTask{
		{TaskID: "a#build", ID: "a#build", Command: "echo built", Cache: store.StatusHit, Cacheable: true, Hash: "k1", DependsOn: []string{}, P50Ms: &p50, Requested: true, ReserveBytes: 4 << 20, ReserveFrom: "history"},
		{TaskID: "b#build", ID: "b#build", Command: "echo built", Cache: store.StatusMiss, Cacheable: true, Hash: "k2", DependsOn: []string{"a#build"}},
	}}
	js, err := json.Marshal(PlanAnswer{Plan: plan, Counts: planCounts(plan)})
	if err != nil {
		t.Fatal(err)
	}
	got := string(js)
	for _, want := range []string{`{"taskId":"a#build","cache":"hit","p50Ms":9}`,
		`{"taskId":"b#build","id":"b#build","command":"echo built","cache":"miss","cacheable":true,"hash":"k2","dependsOn":["a#build"],"p50Ms":null,"requested":false,"affected":null,`,
		`"predicted":{"wallMs":5,"workMs":7,"unknownCount":0,"criticalPath":["a#build"]}`} {
		if !strings.Contains(got, want) {
			t.Errorf("the plan lacks %s: %s", want, got)
		}
	}
}

// TestLeanRowKeepsExecutor: a lean row of a run that may execute remotely says where the task
// ran, so that a fallback to local is visible to the agent.
func TestLeanRowKeepsExecutor(t *testing.T) {
	got, err := leanObject([]byte(`{"taskId":"a#build","status":"miss","hash":"abc","executor":"remote"}`), leanRunKeys)
	if err != nil || string(got) != `{"taskId":"a#build","status":"miss","executor":"remote"}` {
		t.Fatalf("lean row %s %v", got, err)
	}
}
