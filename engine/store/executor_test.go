package store

import (
	"context"
	"testing"
	"time"
)

// TestExecutorKept: where a task ran is kept with its execution; an index of the layout before
// it (version 13) is read as rows that say nothing, and upgraded by the next writer (migration 14).
func TestExecutorKept(t *testing.T) {
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
	execs := []Execution{
		{RunID: run.ID, TaskID: "a#build", Project: "a", Task: "build", Status: StatusMiss, Executor: "remote"},
		{RunID: run.ID, TaskID: "b#build", Project: "b", Task: "build", Status: StatusMiss, Executor: "local", Ord: 1},
	}
	if err := st.Record(ctx, Batch{Executions: execs}); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"a#build": "remote", "b#build": "local"} {
		if e, ok, err := st.Execution(ctx, run.ID, id); err != nil || !ok || e.Executor != want {
			t.Fatalf("read back %s: %+v %v %v, want executor %s", id, e, ok, err, want)
		}
	}
	// The layout before migration 14, as a vx of version 13 left it.
	for _, q := range []string{`ALTER TABLE executions DROP COLUMN executor`,
		`PRAGMA user_version = 13`, `UPDATE meta SET value = '13' WHERE key = 'schema'`} {
		if _, err := st.db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	st.Close()
	ro, err := OpenReadOnly(ctx, dir)
	if err != nil {
		t.Fatalf("a reader of version 13: %v", err)
	}
	a, ok, err := ro.Execution(ctx, run.ID, "a#build")
	ro.Close()
	if err != nil || !ok || a.Executor != "" {
		t.Fatalf("version 13 read: %+v %v %v", a, ok, err)
	}
	st, err = Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v, _ := stamps(t, st.db); v != SchemaVersion {
		t.Fatalf("upgraded to %d, want %d", v, SchemaVersion)
	}
	if err := st.Record(ctx, Batch{Executions: []Execution{{RunID: run.ID, TaskID: "c#build", Project: "c", Task: "build",
		Status: StatusMiss, Executor: "remote", Ord: 2}}}); err != nil {
		t.Fatal(err)
	}
	if c, ok, err := st.Execution(ctx, run.ID, "c#build"); err != nil || !ok || c.Executor != "remote" {
		t.Fatalf("after the upgrade: %+v %v %v", c, ok, err)
	}
}
