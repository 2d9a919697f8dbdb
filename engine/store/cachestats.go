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
	from, args := projectSince(project, sinceMs)
	if err := s.db.QueryRowContext(ctx, `SELECT coalesce(sum(e.status NOT IN `+neverStarted+`), 0), coalesce(sum(e.status = `+sqlHit+`), 0),
		coalesce(sum(e.status IN `+verdictStatuses+`), 0) FROM `+from, args...).Scan(&c.ExecutionsSince, &c.HitsSince, &c.CacheableSince); err != nil {
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

// projectSince answers the FROM and WHERE of a query of the executions (as e) of project that
// started at or after sinceMs, and its arguments: through the runs that ended since then or have
// not ended (an execution that started since is one of theirs), each one's rows of the project's
// task ids in the primary key.
func projectSince(project string, sinceMs int64) (string, []any) {
	lo, hi := projectRange(project)
	return `runs r CROSS JOIN executions e ON e.run_id = r.id AND e.task_id >= ? AND e.task_id < ?
		WHERE (r.finished_ms IS NULL OR r.finished_ms >= ?) AND e.started_ms >= ? AND e.project = ?`,
		[]any{lo, hi, sinceMs, sinceMs, project}
}
