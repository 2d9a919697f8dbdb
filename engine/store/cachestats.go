package store

import (
	"context"
	"fmt"
	"time"
)

// neverStarted are the statuses of an execution whose command never started.
var neverStarted = sqlList(StatusBlocked, StatusSkipped)

// CacheCounts are the cache statistics the index answers directly.
type CacheCounts struct {
	Entries    int
	TotalBytes int64
	// ExecutionsSince counts the task executions since the given time (of the project's tasks,
	// when narrowed to one) that ran or restored their task: a blocked or skipped task ran
	// nothing. HitsSince counts the hits among them, CacheableSince the executions that could
	// have hit (hits, misses, failures and timeouts).
	ExecutionsSince, HitsSince, CacheableSince int
}

// CountCache answers the shared store's entry counts and this checkout's recent run/hit counts,
// narrowed to a project when given.
func (s *Store) CountCache(ctx context.Context, project string, since time.Time) (CacheCounts, error) {
	var c CacheCounts
	var err error
	if c.Entries, c.TotalBytes, err = s.CacheTotals(ctx, project); err != nil || s.db == nil {
		return c, err
	}
	sinceMs := ms(since)
	if project == "" {
		// Ranges of the executions_by_status index, counted without reading a row.
		if err := s.db.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM executions WHERE status NOT IN `+neverStarted+` AND started_ms >= ?),
			(SELECT count(*) FROM executions WHERE status = `+sqlHit+` AND started_ms >= ?),
			(SELECT count(*) FROM executions WHERE status IN `+verdictStatuses+` AND started_ms >= ?)`,
			sinceMs, sinceMs, sinceMs).Scan(&c.ExecutionsSince, &c.HitsSince, &c.CacheableSince); err != nil {
			return c, fmt.Errorf("count cache use: %w", err)
		}
		return c, nil
	}
	if err := s.db.QueryRowContext(ctx, `SELECT coalesce(sum(status NOT IN `+neverStarted+`), 0), coalesce(sum(status = `+sqlHit+`), 0),
		coalesce(sum(status IN `+verdictStatuses+`), 0) FROM executions WHERE started_ms >= ? AND task_id >= ? AND task_id < ? AND project = ?`,
		projectArgs(project, sinceMs)...).Scan(&c.ExecutionsSince, &c.HitsSince, &c.CacheableSince); err != nil {
		return c, fmt.Errorf("count cache use: %w", err)
	}
	return c, nil
}

// CacheTotals answers how many cache entries the shared store holds and the bytes of their blobs,
// narrowed to a project when given.
func (s *Store) CacheTotals(ctx context.Context, project string) (entries int, totalBytes int64, err error) {
	if s.sh == nil {
		return 0, 0, nil
	}
	q := `SELECT count(*), coalesce(sum(size), 0) FROM cache_entries`
	var args []any
	if project != "" {
		q += ` WHERE project = ?`
		args = append(args, project)
	}
	if err := s.sh.db.QueryRowContext(ctx, q, args...).Scan(&entries, &totalBytes); err != nil {
		return 0, 0, fmt.Errorf("count cache entries: %w", err)
	}
	return entries, totalBytes, nil
}
