package store

import (
	"context"
	"testing"
	"time"
)

// Why a passing task stored no cache entry, and whether --force made it run, are kept with its
// execution; an index of the layout before them (version 9) is read as a run that said neither,
// and upgraded by the next writer.
func TestNotCachedAndForcedKept(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	run := Run{ID: NewRunID(time.UnixMilli(1_780_000_000_000)), Started: time.UnixMilli(1_780_000_000_000), Status: RunOK}
	if err := st.BeginRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	why := "output dist/cfg is a symlink to ../../../vx.workspace.ts, outside its project"
	execs := []Execution{
		{RunID: run.ID, TaskID: "a#build", Project: "a", Task: "build", Status: StatusMiss, NotCached: why},
		{RunID: run.ID, TaskID: "b#build", Project: "b", Task: "build", Status: StatusMiss, Forced: true, Ord: 1},
	}
	if err := st.Record(ctx, Batch{Executions: execs}); err != nil {
		t.Fatal(err)
	}
	a, _, err := st.Execution(ctx, run.ID, "a#build")
	if err != nil || a.NotCached != why || a.Forced || a.Reported() != StatusMiss {
		t.Fatalf("read back a#build %+v (%v)", a, err)
	}
	b, _, err := st.Execution(ctx, run.ID, "b#build")
	if err != nil || !b.Forced || b.Status != StatusMiss || b.Reported() != StatusForced {
		t.Fatalf("read back b#build %+v (%v): want a forced miss", b, err)
	}
	// A forced miss counts among the runs that passed, as any miss.
	var counts map[string]map[Status]int
	err = st.Snapshot(ctx, func(sn *Snapshot) error {
		counts, err = sn.StatusCounts(ctx, Window{Oldest: run.ID, Newest: run.ID})
		return err
	})
	if err != nil || counts[run.ID][StatusMiss] != 2 {
		t.Fatalf("status counts %v (%v), want 2 misses", counts, err)
	}
	// The layout before migration 11, as a vx of version 10 left it.
	for _, q := range []string{`ALTER TABLE executions DROP COLUMN forced`, `ALTER TABLE executions DROP COLUMN not_cached`,
		`PRAGMA user_version = 10`, `UPDATE meta SET value = '10' WHERE key = 'schema'`} {
		if _, err := st.db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	st.Close()
	ro, err := OpenReadOnly(ctx, dir)
	if err != nil {
		t.Fatalf("a reader of version 10: %v", err)
	}
	a, ok, err := ro.Execution(ctx, run.ID, "a#build")
	ro.Close()
	if err != nil || !ok || a.NotCached != "" || a.Forced {
		t.Fatalf("version 10 read: %+v %v %v", a, ok, err)
	}
	st, err = Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v, _ := stamps(t, st.db); v != SchemaVersion {
		t.Errorf("upgraded to %d, want %d", v, SchemaVersion)
	}
}

// A summary's forced task ran its command, as a miss did.
func TestForcedRan(t *testing.T) {
	if !StatusForced.Ran() || !StatusMiss.Ran() || StatusHit.Ran() {
		t.Fatal("forced and miss ran, a hit did not")
	}
}
