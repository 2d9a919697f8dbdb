package store

import (
	"context"
	"fmt"
	"testing"
)

// FillDisk makes the index as full as a full disk makes it: from now on, a write that needs a
// page more than the index has fails as SQLite fails on ENOSPC ("database or disk is full").
// free lifts the limit. The store keeps one connection, which the limit is set on.
func FillDisk(t *testing.T, s *Store) (free func()) {
	t.Helper()
	s.db.SetMaxOpenConns(1)
	s.db.SetMaxIdleConns(1)
	set := func(pages int64) {
		var got int64
		if err := s.db.QueryRowContext(context.Background(), fmt.Sprintf("PRAGMA max_page_count = %d", pages)).Scan(&got); err != nil {
			t.Fatalf("max_page_count: %v", err)
		}
	}
	set(1) // SQLite keeps it at the index's size, no lower
	return func() { set(1 << 30) }
}
