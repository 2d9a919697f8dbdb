package resources

import (
	"context"
	"testing"
	"time"

	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/store"
)

// The plan's p50 (the executions the scheduler reads back from the index) and the history's take
// the same executions: those that ran the command and passed.
func TestP50CountsOnlyPassedRuns(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	var execs []store.Execution
	for i, e := range []struct {
		status store.Status
		d      time.Duration
	}{
		{store.StatusMiss, 5 * time.Second}, {store.StatusFailed, 70 * time.Millisecond}, {store.StatusFailed, 72 * time.Millisecond},
		{store.StatusTimedOut, time.Minute}, {store.StatusHit, 3 * time.Millisecond}, {store.StatusMiss, 4 * time.Second},
		{store.StatusFailed, 75 * time.Millisecond},
	} {
		id := store.NewRunID(now.Add(time.Duration(i) * time.Second))
		if err := st.BeginRun(ctx, store.Run{ID: id, Started: now}); err != nil {
			t.Fatal(err)
		}
		code := 0
		x := store.Execution{RunID: id, TaskID: "p#build", Project: "p", Task: "build", Status: e.status, Hash: "k",
			Duration: e.d, ExitCode: &code, Started: now}
		if err := st.Record(ctx, store.Batch{Executions: []store.Execution{x}}); err != nil {
			t.Fatal(err)
		}
		execs = append([]store.Execution{x}, execs...)
	}
	recent, err := st.RecentCommandRuns(ctx, []string{"p#build", "p#never"}, EstimateWindow)
	if err != nil {
		t.Fatal(err)
	}
	p50s, _ := Estimates(recent)
	if p50s["p#build"] != 4000 {
		t.Errorf("plan p50 = %d ms, want 4000 (the failures, the timeout and the hit do not count)", p50s["p#build"])
	}
	if _, ok := p50s["p#never"]; ok {
		t.Error("a task that never ran has a p50")
	}
	s := history.Stats("p#build", execs)
	if s.P50Ms == nil || *s.P50Ms != 4000 || *s.P99Ms != 5000 {
		t.Errorf("history p50 %v p99 %v, want 4000 and 5000", s.P50Ms, s.P99Ms)
	}
}
