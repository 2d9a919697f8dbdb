package runner

import (
	"context"
	"io"
	"testing"

	"github.com/vzn/vx/engine/store"
)

// BenchmarkEstimates500 is what every run pays to plan its schedule: each of 500 tasks' recent
// executions read (one query a task), their p50s, peaks, priorities and reservations.
func BenchmarkEstimates500(b *testing.B) {
	ws := generate(b, 500)
	ids := append([]string(nil), ws.TaskIDs()...)
	opts := Options{Workspace: ws, TaskIDs: ids, Requested: ids, Output: io.Discard}
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if _, err := Run(ctx, opts); err != nil {
			b.Fatal(err)
		}
	}
	st, err := store.Open(ctx, ws.CacheDir, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	nodes, _ := buildNodes(ws, ids)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := memoEstimates(ctx, st, ws, nodes, knownRuns(nil).recentRuns); err != nil {
			b.Fatal(err)
		}
	}
}
