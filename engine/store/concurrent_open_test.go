package store

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
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
