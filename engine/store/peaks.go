package store

import (
	"context"
	"fmt"
)

// RecentPeaks answers, for each task id that ran its command (miss, failed or timed out) among its
// last n executions, the largest peak RSS those executions showed (0 when each was lighter than
// the measure). A task that never ran its command is absent. The scheduler reserves from it.
func (s *Store) RecentPeaks(ctx context.Context, taskIDs []string, n int) (map[string]int64, error) {
	out := make(map[string]int64, len(taskIDs))
	if s.db == nil || len(taskIDs) == 0 {
		return out, nil
	}
	stmt, err := s.prepared(ctx, `SELECT COUNT(*), COALESCE(MAX(peak_rss), 0) FROM (SELECT peak_rss FROM executions
		WHERE task_id = ? AND status IN ('miss', 'failed', 'timedOut') ORDER BY run_id DESC, ord DESC LIMIT ?)`)
	if err != nil {
		return nil, fmt.Errorf("read recent peaks: %w", err)
	}
	for _, id := range taskIDs {
		var count, peak int64
		if err := stmt.QueryRowContext(ctx, id, n).Scan(&count, &peak); err != nil {
			return nil, fmt.Errorf("read recent peaks of %s: %w", id, err)
		}
		if count > 0 {
			out[id] = peak
		}
	}
	return out, nil
}
