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
	if err := st.Record(ctx, Batch{Executions: execs}); err != nil {
		t.Fatal(err)
	}
	const want = "a#test c#test"
	if got, err := st.FlakyTasks(ctx); err != nil || strings.Join(got, " ") != want {
		t.Errorf("through key_outcomes: %v (%v), want %s", got, err, want)
	}
	err = st.Snapshot(ctx, func(sn *Snapshot) error {
		runs, err := sn.Runs(ctx, RunQuery{})
		if err != nil {
			return err
		}
		flaky, err := sn.FlakyTasks(ctx, Window{Oldest: runs[len(runs)-1].ID, Newest: runs[0].ID})
		if got := strings.Join(slices.Sorted(maps.Keys(flaky)), " "); got != want {
			t.Errorf("in a window of the whole history: %s, want %s", got, want)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
