package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Writers that open a new state folder at once all open it: they race to turn the fresh index to
// WAL and to create its tables, and SQLite answers SQLITE_BUSY at once, without waiting, to the
// one whose wait could deadlock the other (two runs at once of a workspace never run before).
func TestConcurrentFirstOpen(t *testing.T) {
	for round := range 25 {
		dir := filepath.Join(t.TempDir(), ".vx")
		var wg sync.WaitGroup
		const writers = 6
		errs := make([]error, writers)
		for i := range writers {
			wg.Go(func() {
				st, err := Open(context.Background(), dir, Options{ResetOtherVersion: true})
				if err == nil {
					st.Close()
				}
				errs[i] = err
			})
		}
		wg.Wait()
		for _, e := range errs {
			if e != nil {
				t.Fatalf("round %d: a writer failed to open: %v", round, e)
			}
		}
	}
}

// Checkouts that open one new shared store at once, each its own folder, all open it, and each
// one's entries and command runs are there for every other: the shared index is created once, by
// whichever comes first, and every write waits for the others through SQLite's locks.
func TestCheckoutsOpenOneSharedStoreAtOnce(t *testing.T) {
	ctx := context.Background()
	for round := range 10 {
		shared := filepath.Join(t.TempDir(), "shared")
		var wg sync.WaitGroup
		const checkouts = 6
		errs := make([]error, checkouts)
		for i := range checkouts {
			wg.Go(func() {
				st, err := Open(ctx, filepath.Join(t.TempDir(), ".vx"), Options{SharedDir: shared, ResetOtherVersion: true})
				if err != nil {
					errs[i] = err
					return
				}
				defer st.Close()
				now := time.Now()
				key := fmt.Sprintf("k%d", i)
				if errs[i] = st.PutEntry(ctx, Entry{Hash: key, TaskID: "app#build", Project: "app", Command: "c", Created: now, LastUsed: now}); errs[i] != nil {
					return
				}
				id := NewRunID(now)
				if errs[i] = st.BeginRun(ctx, Run{ID: id, Started: now, PID: os.Getpid()}); errs[i] != nil {
					return
				}
				errs[i] = st.Record(ctx, Batch{Executions: []Execution{{RunID: id, TaskID: "app#build", Project: "app", Task: "build",
					Status: StatusMiss, Hash: key, Duration: time.Second}}, Touched: []string{key}, TouchedAt: now})
			})
		}
		wg.Wait()
		for _, e := range errs {
			if e != nil {
				t.Fatalf("round %d: a checkout failed: %v", round, e)
			}
		}
		st, err := OpenReadOnlyShared(ctx, filepath.Join(t.TempDir(), ".vx"), shared)
		if err != nil {
			t.Fatal(err)
		}
		n, _, err := st.CacheTotals(ctx, "")
		runs, rerr := st.RecentCommandRuns(ctx, []string{"app#build"}, 50)
		st.Close()
		if err != nil || rerr != nil || n != checkouts || len(runs["app#build"]) != checkouts {
			t.Fatalf("round %d: %d entries, %d command runs (%v, %v), want %d of each", round, n, len(runs["app#build"]), err, rerr, checkouts)
		}
	}
}
