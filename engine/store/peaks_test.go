package store

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// Each task answers its own last n command runs, newest first, whatever the number of tasks asked
// at once (more than one statement's worth here) and however their runs interleave; a hit is no
// command run, and a task with none is absent.
func TestRecentCommandRunsWindow(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const tasks, runs, window = recentRunsPerQuery + 7, 6, 4
	ids := make([]string, tasks)
	for i := range ids {
		ids[i] = fmt.Sprintf("p%04d#build", i)
	}
	for r := 0; r < runs; r++ {
		id := NewRunID(time.Now())
		if err := st.BeginRun(ctx, Run{ID: id, Started: time.Now(), PID: os.Getpid()}); err != nil {
			t.Fatal(err)
		}
		var b Batch
		for i, task := range ids {
			status := StatusMiss
			if i%3 == 0 && r == runs-1 {
				status = StatusHit // the newest execution of every third task ran nothing
			}
			b.Executions = append(b.Executions, Execution{RunID: id, TaskID: task, Project: task[:5], Task: "build",
				Status: status, Duration: time.Duration(r*1000+i) * time.Millisecond, PeakRSSBytes: int64(r)})
		}
		if err := st.Record(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.RecentCommandRuns(ctx, append(ids, "never#ran"), window)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != tasks {
		t.Fatalf("answered %d tasks, want %d", len(got), tasks)
	}
	for i, task := range ids {
		newest := runs - 1
		if i%3 == 0 {
			newest-- // its hit is no command run
		}
		rs := got[task]
		if len(rs) != window {
			t.Fatalf("%s: %d runs, want %d", task, len(rs), window)
		}
		for k, c := range rs {
			r := newest - k
			if want := time.Duration(r*1000+i) * time.Millisecond; c.Duration != want || c.PeakRSSBytes != int64(r) {
				t.Fatalf("%s run %d: %v, want the run of round %d (%v)", task, k, c, r, want)
			}
		}
	}
}
