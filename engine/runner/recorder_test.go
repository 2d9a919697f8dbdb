package runner

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/vzn/vx/engine/store"
)

// Batches handed over one after another, faster than commits go, are all recorded by the time
// close returns; a store that cannot be written makes close answer the failure.
func TestRecorderRecordsEveryBatch(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id := store.NewRunID(time.Now())
	if err := st.BeginRun(ctx, store.Run{ID: id, Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(ctx, st)
	const n = 500
	for i := range n {
		rec.add(store.Batch{Executions: []store.Execution{{RunID: id, TaskID: fmt.Sprintf("p%d#build", i), Project: fmt.Sprintf("p%d", i),
			Task: "build", Ord: i, Status: "hit"}}, TouchedAt: time.Now()})
	}
	rec.add(store.Batch{}) // an empty batch is nothing to commit
	if err := rec.close(); err != nil {
		t.Fatal(err)
	}
	if err := rec.close(); err != nil {
		t.Fatalf("a second close: %v", err)
	}
	execs, err := st.Executions(ctx, id)
	if err != nil || len(execs) != n {
		t.Fatalf("%d executions recorded (%v), want %d", len(execs), err, n)
	}

	ro, err := store.OpenReadOnly(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	rec = newRecorder(ctx, ro)
	rec.add(store.Batch{Executions: []store.Execution{{RunID: id, TaskID: "q#build", Status: "hit"}}})
	if err := rec.close(); err == nil {
		t.Error("a read-only store recorded without a failure")
	}
}
