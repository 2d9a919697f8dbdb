package store

import (
	"context"
	"fmt"
)

// FlakyTasks answers the tasks of which one cache key both passed and failed, sorted.
func (s *Store) FlakyTasks(ctx context.Context) ([]string, error) {
	out := []string{}
	if s.db == nil {
		return out, nil
	}
	query := `SELECT DISTINCT task_id FROM key_outcomes WHERE passed AND failed ORDER BY task_id`
	if !hasTable(ctx, s.db, "key_outcomes") {
		query = flakyFromHistory
	}
	rows, err := s.db.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("read flaky tasks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("read flaky tasks: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// flakyFromHistory finds the flaky tasks in an index without key_outcomes (recorded before it
// existed and not yet opened by a writer): failures are few, so find them (through
// executions_by_status), then look each one's key up among the same task's passes.
const flakyFromHistory = `SELECT DISTINCT f.task_id FROM executions f
	WHERE f.rowid IN (SELECT e.rowid FROM executions e WHERE e.status IN ('failed', 'timedOut')) AND f.hash != ''
	AND EXISTS (SELECT 1 FROM executions p WHERE p.task_id = f.task_id AND p.hash = f.hash AND +p.status IN ('hit', 'miss'))
	ORDER BY f.task_id`
