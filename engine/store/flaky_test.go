package store

import (
	"context"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// The flaky tasks key_outcomes answers for the whole history are those a window over the whole
// history finds: one definition, kept two ways.
func TestFlakyTasksOneDefinition(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var execs []Execution
	for i, e := range []struct {
		task, hash string
		status     Status
	}{
		{"a#test", "k1", "miss"}, {"a#test", "k1", "failed"}, // flaky: one key passed and failed
		{"b#test", "k2", "miss"}, {"b#test", "k3", "failed"}, // deterministic: the key changed
		{"c#test", "k4", "hit"}, {"c#test", "k4", "timedOut"}, // flaky by a timeout
		{"d#test", "", "failed"}, {"d#test", "", "miss"}, // no key: never flaky
		{"e#test", "k5", "blocked"}, {"e#test", "k5", "miss"}, // blocked is no verdict
	} {
		// One run records a task once: give each its own run.
		id := NewRunID(time.Now().Add(time.Duration(i) * time.Millisecond))
		if err := st.BeginRun(ctx, Run{ID: id, Started: time.Now(), PID: os.Getpid()}); err != nil {
			t.Fatal(err)
		}
		execs = append(execs, Execution{RunID: id, TaskID: e.task, Project: e.task[:1], Task: "test", Ord: i, Status: e.status, Hash: e.hash})
	}
	// flaky in one run: it passed after a failed attempt (vx run --retry)
	retried := NewRunID(time.Now().Add(time.Second))
	if err := st.BeginRun(ctx, Run{ID: retried, Started: time.Now(), PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	execs = append(execs, Execution{RunID: retried, TaskID: "f#test", Project: "f", Task: "test", Status: "miss", Hash: "k6", FailedAttempts: 1},
		Execution{RunID: retried, TaskID: "g#test", Project: "g", Task: "test", Status: "failed", Hash: "k7", FailedAttempts: 2})
	if err := st.Record(ctx, Batch{Executions: execs}); err != nil {
		t.Fatal(err)
	}
	const want = "a#test c#test f#test"
	if got, err := st.FlakyTasks(ctx); err != nil || strings.Join(got, " ") != want {
		t.Errorf("through key_outcomes: %v (%v), want %s", got, err, want)
	}
	err = st.Snapshot(ctx, func(sn *Snapshot) error {
		runs, err := sn.Runs(ctx, RunQuery{})
		if err != nil {
			return err
		}
		w := Window{Oldest: runs[len(runs)-1].ID, Newest: runs[0].ID}
		flaky, err := sn.FlakyTasks(ctx, w)
		if err != nil {
			return err
		}
		retried, err := sn.RetriedPasses(ctx, w)
		maps.Copy(flaky, retried)
		if got := strings.Join(slices.Sorted(maps.Keys(flaky)), " "); got != want {
			t.Errorf("in a window of the whole history: %s, want %s", got, want)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The outcomes of one key add up across batches and single executions, and writing a verdict a
// key already holds changes nothing: the writer upserts them, no trigger does.
func TestOutcomesAcrossWrites(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	begin := func(i int) string {
		id := NewRunID(time.Now().Add(time.Duration(i) * time.Millisecond))
		if err := st.BeginRun(ctx, Run{ID: id, Started: time.Now(), PID: os.Getpid()}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	exec := func(id, task, hash string, status Status) Execution {
		return Execution{RunID: id, TaskID: task, Project: task[:1], Task: "test", Status: status, Hash: hash}
	}
	first := begin(0)
	if err := st.Record(ctx, Batch{Executions: []Execution{exec(first, "a#test", "k1", StatusMiss), exec(first, "b#test", "k2", StatusHit)}}); err != nil {
		t.Fatal(err)
	}
	second := begin(1)
	if err := st.Record(ctx, Batch{Executions: []Execution{exec(second, "b#test", "k2", StatusHit)}}); err != nil {
		t.Fatal(err)
	}
	if got, err := st.FlakyTasks(ctx); err != nil || len(got) != 0 {
		t.Fatalf("before a failure: %v (%v), want none", got, err)
	}
	if err := st.Record(ctx, Batch{Executions: []Execution{exec(begin(2), "a#test", "k1", StatusFailed)}}); err != nil {
		t.Fatal(err)
	}
	if got, err := st.FlakyTasks(ctx); err != nil || strings.Join(got, " ") != "a#test" {
		t.Errorf("after a failure in a later write: %v (%v), want a#test", got, err)
	}
	var rows, triggers int
	if err := st.db.QueryRowContext(ctx, `SELECT count(*) FROM key_outcomes`).Scan(&rows); err != nil || rows != 2 {
		t.Errorf("key_outcomes holds %d rows (%v), want 2", rows, err)
	}
	if err := st.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'trigger'`).Scan(&triggers); err != nil || triggers != 0 {
		t.Errorf("%d triggers (%v), want none", triggers, err)
	}
}
