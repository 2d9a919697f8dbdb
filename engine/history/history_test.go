package history

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vzn/vx/engine/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func exec(run, task string, status store.Status, hash string, d time.Duration) store.Execution {
	code := 0
	if status == store.StatusFailed {
		code = 1
	}
	return store.Execution{RunID: run, TaskID: "p#" + task, Project: "p", Task: task, Status: status, Hash: hash,
		Duration: d, ExitCode: &code, UserCPU: d / 2, PeakRSSBytes: int64(d / time.Millisecond), Started: time.Now()}
}

func TestStatsFailureModes(t *testing.T) {
	// newest first
	flaky := Stats("p#t", []store.Execution{
		exec("3", "t", store.StatusFailed, "k1", 30*time.Millisecond),
		exec("2", "t", store.StatusMiss, "k1", 10*time.Millisecond),
		exec("1", "t", store.StatusHit, "k1", time.Millisecond),
	})
	if flaky.FailureMode == nil || *flaky.FailureMode != FailureFlaky {
		t.Fatalf("flaky: %+v", flaky)
	}
	// Only the miss counts for the durations: the failure stopped anywhere, the hit ran nothing.
	if *flaky.P50Ms != 10 || *flaky.P99Ms != 10 || *flaky.HitRate != 0.333 || *flaky.SuccessRate != 0.667 {
		t.Fatalf("numbers: p50 %d p99 %d hit %v success %v", *flaky.P50Ms, *flaky.P99Ms, *flaky.HitRate, *flaky.SuccessRate)
	}
	if flaky.MaxPeakRssBytes != 30 || flaky.MaxCPUParallelism != 0.5 {
		t.Fatalf("peaks: %+v", flaky)
	}
	det := Stats("p#t", []store.Execution{
		exec("2", "t", store.StatusFailed, "k2", 0),
		exec("1", "t", store.StatusMiss, "k1", 0),
	})
	if det.FailureMode == nil || *det.FailureMode != FailureDeterministic {
		t.Fatalf("different keys are not a flake: %+v", det)
	}
	to := exec("1", "t", store.StatusTimedOut, "k", time.Second)
	to.TimedOut = true
	if s := Stats("p#t", []store.Execution{to}); *s.FailureMode != FailureTimeout {
		t.Fatalf("timeout: %v", *s.FailureMode)
	}
	if s := Stats("p#t", []store.Execution{exec("1", "t", store.StatusMiss, "k", 0)}); s.FailureMode != nil {
		t.Fatal("a task that never failed has a failure mode")
	}
}

func TestHistoryFromIndex(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	for i, status := range []store.Status{store.StatusMiss, store.StatusFailed, store.StatusMiss} {
		id := store.NewRunID(now.Add(time.Duration(i) * time.Second))
		if err := st.BeginRun(ctx, store.Run{ID: id, Started: now}); err != nil {
			t.Fatal(err)
		}
		e := exec(id, "test", status, "k", 10*time.Millisecond)
		e.Started = now
		if err := st.Record(ctx, store.Batch{Executions: []store.Execution{e, exec(id, "lint", store.StatusHit, "l", 0)}}); err != nil {
			t.Fatal(err)
		}
		final := store.RunOK
		if status == store.StatusFailed {
			final = store.RunFailed
		}
		if err := st.FinishRun(ctx, id, final, 0, now); err != nil {
			t.Fatal(err)
		}
	}
	h, err := History(ctx, st, HistoryOptions{Task: "test", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if h.Limit != MaxLimit || len(h.Runs) != 3 || len(h.Tasks) != 1 || *h.Tasks[0].FailureMode != FailureFlaky {
		t.Fatalf("history: %+v", h)
	}
	if len(h.Runs[0].Tasks) != 1 || h.Runs[1].Tasks[0].Status != store.StatusFailed || h.Runs[1].ExitCode != 1 {
		t.Fatalf("runs: %+v", h.Runs)
	}
	if _, err := History(ctx, st, HistoryOptions{Task: "p#test"}); err == nil {
		t.Fatal("a task id was accepted as a task name")
	}
	flaky, err := FlakyTasks(ctx, st)
	if err != nil || len(flaky) != 1 || flaky[0] != "p#test" {
		t.Fatalf("flaky: %v %v", flaky, err)
	}
	c, err := Cache(ctx, st, "", now)
	if err != nil || c.Runs24h != 6 || c.Hits24h != 3 || c.HitRate == nil || *c.HitRate != 0.5 {
		t.Fatalf("cache stats: %+v %v", c, err)
	}
	f, err := FailedTasks(ctx, st, "", nil)
	if err != nil || len(f.Failures) != 1 || f.Failures[0].TaskID != "p#test" {
		t.Fatalf("failures: %+v %v", f, err)
	}
}
