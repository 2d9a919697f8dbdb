package store

import (
	"context"
	"os"
	"testing"
	"time"
)

// A carried estimate is answered for a task that never ran here, as one command run of its p50
// and peak; a task with command runs of its own answers those; an import keeps the newest.
func TestCarriedEstimates(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id := NewRunID(time.Now())
	if err := st.BeginRun(ctx, Run{ID: id, Started: time.Now(), PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	if err := st.Record(ctx, Batch{Executions: []Execution{{RunID: id, TaskID: "a#build", Project: "a", Task: "build",
		Status: StatusMiss, Duration: 40 * time.Millisecond, PeakRSSBytes: 7}}}); err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(1_000_000)
	ests := []Estimate{
		{TaskID: "a#build", P50: time.Second, HasP50: true, PeakRSSBytes: 9, MeasuredAt: at},
		{TaskID: "b#build", P50: 2 * time.Second, HasP50: true, PeakRSSBytes: 3, MeasuredAt: at},
		{TaskID: "c#build", PeakRSSBytes: 5, MeasuredAt: at},
	}
	for i, want := range [][2]int{{3, 0}, {0, 0}} { // a second import of the same changes nothing
		added, replaced, err := st.CarryEstimates(ctx, ests)
		if err != nil || added != want[0] || replaced != want[1] {
			t.Fatalf("import %d: added %d replaced %d (%v), want %v", i+1, added, replaced, err, want)
		}
	}
	newer := Estimate{TaskID: "b#build", P50: 3 * time.Second, HasP50: true, PeakRSSBytes: 4, MeasuredAt: at.Add(time.Millisecond)}
	older := Estimate{TaskID: "c#build", P50: time.Hour, HasP50: true, MeasuredAt: at.Add(-time.Millisecond)}
	if added, replaced, err := st.CarryEstimates(ctx, []Estimate{newer, older}); err != nil || added != 0 || replaced != 1 {
		t.Fatalf("newer and older: added %d replaced %d (%v), want 0 1", added, replaced, err)
	}
	runs, err := st.RecentCommandRuns(ctx, []string{"a#build", "b#build", "c#build", "d#build"}, 20)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]CommandRun{
		"a#build": {Status: StatusMiss, Duration: 40 * time.Millisecond, PeakRSSBytes: 7}, // its own run wins
		"b#build": {Status: StatusMiss, Duration: 3 * time.Second, PeakRSSBytes: 4},
		"c#build": {Status: StatusFailed, PeakRSSBytes: 5}, // no p50: a peak only
	}
	if len(runs) != len(want) {
		t.Fatalf("runs %v, want %v", runs, want)
	}
	for id, w := range want {
		if got := runs[id]; len(got) != 1 || got[0] != w {
			t.Errorf("%s: %v, want [%v]", id, got, w)
		}
	}
}
