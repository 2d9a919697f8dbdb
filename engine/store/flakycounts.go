package store

import (
	"context"
	"fmt"
	"time"
)

// FlakyCount is a flaky task as vx info's flakyTasks lists it: how many of its cache keys both
// passed and failed, and the passes and failures recorded over those keys (an execution that
// passed after failed attempts counts as both).
type FlakyCount struct {
	TaskID   string `json:"taskId"`
	Project  string `json:"project"`
	Task     string `json:"task"`
	Keys     int    `json:"keys"`
	Passes   int    `json:"passes"`
	Failures int    `json:"failures"`
}

// FlakyCounts answers every flaky task of the history (FlakyTasks' definition) with its counts,
// most failures first, then most passes, then by task id. The flaky keys are read first (CROSS
// JOIN keeps them the outer loop), each key's executions run by run in the primary key.
func (s *Store) FlakyCounts(ctx context.Context) ([]FlakyCount, error) {
	out := []FlakyCount{}
	if s.db == nil {
		return out, nil
	}
	rows, err := queryAll(ctx, s.db, "flaky task counts", func(sc scanner) (FlakyCount, error) {
		var c FlakyCount
		err := sc.Scan(&c.TaskID, &c.Project, &c.Task, &c.Keys, &c.Passes, &c.Failures)
		return c, err
	}, `SELECT e.task_id, min(e.project), min(e.task), count(DISTINCT e.hash),
		coalesce(sum(e.status IN `+passedStatuses+`), 0),
		coalesce(sum(e.status IN `+failedStatuses+` OR e.failed_attempts > 0), 0)
		FROM (SELECT task_id, hash FROM key_outcomes WHERE passed AND failed) k
		CROSS JOIN runs r CROSS JOIN executions e ON e.run_id = r.id AND e.task_id = k.task_id AND e.hash = k.hash
		GROUP BY e.task_id ORDER BY 6 DESC, 5 DESC, e.task_id`)
	if err != nil {
		return nil, err
	}
	return append(out, rows...), nil
}

// RestoredSince counts the hits since the given time that restored output files (the rest found
// their outputs in place).
func (s *Store) RestoredSince(ctx context.Context, since time.Time) (int, error) {
	if s.db == nil {
		return 0, nil
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM executions WHERE status = `+sqlHit+` AND started_ms >= ? AND restored_files > 0`,
		ms(since)).Scan(&n); err != nil {
		return 0, fmt.Errorf("count restoring hits: %w", err)
	}
	return n, nil
}
