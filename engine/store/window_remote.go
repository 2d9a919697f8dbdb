package store

import (
	"context"
	"fmt"
)

// RemoteHitsByRun counts, for each run of the window, its hits restored from the shared remote
// cache (the executions' cache_source); a run with none is absent.
func (sn *Snapshot) RemoteHitsByRun(ctx context.Context, w Window) (map[string]int, error) {
	out := map[string]int{}
	if sn.q == nil {
		return out, nil
	}
	cond, args := w.where("e")
	rows, err := sn.q.QueryContext(ctx, `SELECT e.run_id, count(*) FROM executions e WHERE `+cond+
		` AND e.status = `+sqlHit+` AND e.cache_source IN ('remote', 'remote-action') GROUP BY e.run_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("count remote hits: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var runID string
		var n int
		if err := rows.Scan(&runID, &n); err != nil {
			return nil, fmt.Errorf("count remote hits: %w", err)
		}
		out[runID] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count remote hits: %w", err)
	}
	return out, nil
}
