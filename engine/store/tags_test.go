package store

import (
	"context"
	"maps"
	"os"
	"testing"
	"time"
)

// A run's tags are kept with it and read back with it; a run without tags reads none.
func TestRunTagsKept(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tagged := Run{ID: NewRunID(time.UnixMilli(1_780_000_000_000)), Started: time.UnixMilli(1_780_000_000_000), PID: os.Getpid(),
		Tags: map[string]string{"branch": "main", "job": "test (1/2)"}}
	plain := Run{ID: NewRunID(time.UnixMilli(1_780_000_001_000)), Started: time.UnixMilli(1_780_000_001_000), PID: os.Getpid()}
	for _, r := range []Run{tagged, plain} {
		if err := st.BeginRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := st.FinishRun(ctx, r.ID, RunOK, 0, r.Started.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	ro, err := OpenReadOnly(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	got, ok, err := ro.RunByID(ctx, tagged.ID)
	if err != nil || !ok || !maps.Equal(got.Tags, tagged.Tags) {
		t.Errorf("tagged run read back with %v (%v, %v), want %v", got.Tags, ok, err, tagged.Tags)
	}
	runs, err := ro.Runs(ctx, RunQuery{})
	if err != nil || len(runs) != 2 || runs[0].Tags != nil || !maps.Equal(runs[1].Tags, tagged.Tags) {
		t.Errorf("runs read back %+v (%v)", runs, err)
	}
}
