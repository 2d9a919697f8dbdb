package store

import (
	"context"
	"testing"
	"time"
)

// How long a task waited for another run is kept with its execution; an index of the layout
// before it (version 5) is read as if no task had waited, and upgraded by the next writer.
func TestWaitedKept(t *testing.T) {
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
	e := Execution{RunID: run.ID, TaskID: "a#build", Project: "a", Task: "build", Status: "hit", Waited: 1500 * time.Millisecond}
	if err := st.Record(ctx, Batch{Executions: []Execution{e}}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := st.Execution(ctx, run.ID, "a#build")
	if err != nil || !ok || got.Waited != e.Waited {
		t.Fatalf("read back waited %v (%v, %v), want %v", got.Waited, ok, err, e.Waited)
	}
	// The layout before migration 6, as a vx of version 5 left it.
	for _, q := range []string{`ALTER TABLE executions DROP COLUMN forced`, `ALTER TABLE executions DROP COLUMN not_cached`, `ALTER TABLE runs DROP COLUMN tags`, `DROP INDEX executions_retried`, `ALTER TABLE executions DROP COLUMN failed_attempts`, `ALTER TABLE executions DROP COLUMN restored_files`, `ALTER TABLE executions DROP COLUMN waited_ms`, `PRAGMA user_version = 5`,
		`UPDATE meta SET value = '5' WHERE key = 'schema'`} {
		if _, err := st.db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	st.Close()

	ro, err := OpenReadOnly(ctx, dir)
	if err != nil {
		t.Fatalf("a reader of version 5: %v", err)
	}
	got, ok, err = ro.Execution(ctx, run.ID, "a#build")
	ro.Close()
	if err != nil || !ok || got.Waited != 0 || got.Status != "hit" {
		t.Fatalf("version 5 read: %+v %v %v, want the row with nothing waited", got, ok, err)
	}
	st, err = Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v, _ := stamps(t, st.db); v != SchemaVersion {
		t.Errorf("upgraded to %d, want %d", v, SchemaVersion)
	}
	if got, _, err := st.Execution(ctx, run.ID, "a#build"); err != nil || got.Waited != 0 {
		t.Errorf("after the upgrade: %+v %v", got, err)
	}
}
