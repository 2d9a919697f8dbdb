package store

import (
	"context"
	"fmt"
	"time"
)

// CountRemoteHits counts the hits restored from the shared remote cache since a time, narrowed to
// a project when given. The executions' cache_source column holds where each hit came from, so
// this needs no migration of its own.
func (s *Store) CountRemoteHits(ctx context.Context, project string, since time.Time) (int, error) {
	if s.db == nil {
		return 0, nil
	}
	q := `SELECT count(*) FROM executions e WHERE status = ` + sqlHit + ` AND cache_source IN ('remote', 'remote-action') AND started_ms >= ?`
	args := []any{ms(since)}
	if project != "" {
		var from string
		from, args = projectSince(project, ms(since))
		q = `SELECT count(*) FROM ` + from + ` AND e.status = ` + sqlHit + ` AND e.cache_source IN ('remote', 'remote-action')`
	}
	var n int
	if err := s.db.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count remote hits: %w", err)
	}
	return n, nil
}
