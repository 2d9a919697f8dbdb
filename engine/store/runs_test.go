package store_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/store"
)

// executions are n executions of run id, each with a log of 1 KiB: enough to need new pages.
func executions(id string, from, n int) []store.Execution {
	var out []store.Execution
	for i := from; i < from+n; i++ {
		out = append(out, store.Execution{RunID: id, TaskID: fmt.Sprintf("p%d#build", i), Project: fmt.Sprintf("p%d", i),
			Task: "build", Ord: i, Status: "miss", Hash: strings.Repeat("h", 64), LogBlob: strings.Repeat("x", 1024)})
	}
	return out
}

// A disk that fills during a run never leaves a run in history without its executions: not when
// no execution could be written ("0 tasks"), not when some were and the rest could not be.
func TestFullDiskRecordsRunWholeOrNotAtAll(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	started := time.UnixMilli(1_800_000_000_000)
	begin := func(id string) {
		t.Helper()
		if err := st.BeginRun(ctx, store.Run{ID: id, Started: started, PID: os.Getpid(), Host: "h", TaskCount: 200}); err != nil {
			t.Fatal(err)
		}
	}
	listed := func() []string {
		t.Helper()
		l, err := history.List(ctx, st, 0)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range l {
			ids = append(ids, fmt.Sprintf("%s:%d", r.RunID, r.Totals.Tasks))
		}
		return ids
	}

	// The disk is full from the run's start: nothing of it is written.
	first := store.NewRunID(started)
	begin(first)
	free := store.FillDisk(t, st)
	err = st.Record(ctx, store.Batch{Executions: executions(first, 0, 200)})
	if err == nil || !strings.Contains(err.Error(), "full") {
		t.Fatalf("a batch on a full disk: %v, want the disk full", err)
	}
	if err := st.FinishRun(ctx, first, store.RunFailed, 1, started.Add(time.Second)); err != nil {
		t.Fatalf("finish a run that recorded nothing: %v", err)
	}
	if got := listed(); len(got) != 0 {
		t.Fatalf("history after a run on a full disk lists %v, want nothing", got)
	}

	// The disk fills half way: the run is removed with the executions it had written.
	free()
	second := store.NewRunID(started.Add(time.Second))
	begin(second)
	if err := st.Record(ctx, store.Batch{Executions: executions(second, 0, 2)}); err != nil {
		t.Fatal(err)
	}
	free = store.FillDisk(t, st)
	if err := st.Record(ctx, store.Batch{Executions: executions(second, 2, 198)}); err == nil {
		t.Fatal("a batch on a full disk was recorded")
	}
	free() // room again: a later batch of the run must not make it look whole
	if err := st.Record(ctx, store.Batch{Executions: executions(second, 200, 1)}); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(ctx, second, store.RunFailed, 1, started.Add(2*time.Second)); err != nil {
		t.Fatalf("finish a run that recorded a part: %v", err)
	}
	if got := listed(); len(got) != 0 {
		t.Fatalf("history after a run half recorded lists %v, want nothing", got)
	}
	if execs, err := st.Executions(ctx, second); err != nil || len(execs) != 0 {
		t.Fatalf("%d executions of the removed run are left (%v)", len(execs), err)
	}

	// With room, a run is recorded whole, and a run of no task too.
	third := store.NewRunID(started.Add(2 * time.Second))
	begin(third)
	if err := st.Record(ctx, store.Batch{Executions: executions(third, 0, 200)}); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(ctx, third, store.RunOK, 0, started.Add(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	empty := store.NewRunID(started.Add(3 * time.Second))
	begin(empty)
	if err := st.FinishRun(ctx, empty, store.RunOK, 0, started.Add(4*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(listed(), " "), empty+":0 "+third+":200"; got != want {
		t.Fatalf("history lists %s, want %s", got, want)
	}
}
