package store

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkRecordFullHit1000 records one run of 1,000 hits, as an all-hit `vx run` of a
// 1,000-package workspace does, into an index that holds 30 such runs already:
//
//	go test -run '^$' -bench RecordFullHit -benchtime 20x ./engine/store
func BenchmarkRecordFullHit1000(b *testing.B) {
	st, err := Open(context.Background(), b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	benchRecordInto(b, st)
}

// benchRecordInto records 30 runs of 1,000 hits into st, then times one more a round.
func benchRecordInto(b *testing.B, st *Store) {
	ctx := context.Background()
	start := time.Now()
	run := func(i int) {
		id := NewRunID(start.Add(time.Duration(i) * time.Second))
		if err := st.BeginRun(ctx, Run{ID: id, Started: start}); err != nil {
			b.Fatal(err)
		}
		execs := make([]Execution, 1000)
		restored, code := 20, 0
		for k := range execs {
			execs[k] = Execution{RunID: id, TaskID: fmt.Sprintf("p%04d#build", k), Project: fmt.Sprintf("p%04d", k), Task: "build",
				Ord: k, Status: StatusHit, ExitCode: &code, Started: start, Duration: time.Millisecond,
				Hash: fmt.Sprintf("%064d", k), CacheSource: "local", Saved: 20 * time.Millisecond, LogBlob: fmt.Sprintf("%064x", k),
				LogSource: "cache", RestoredFiles: &restored}
		}
		if err := st.Record(ctx, Batch{Executions: execs}); err != nil {
			b.Fatal(err)
		}
		if err := st.FinishRun(ctx, id, RunOK, 0, start); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 30 {
		run(i)
	}
	i := 30
	b.ResetTimer()
	for b.Loop() {
		run(i)
		i++
	}
}
