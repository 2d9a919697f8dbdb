package store

import (
	"context"
	"fmt"
)

// key_outcomes keeps, per task and cache key, whether an execution of it ever passed and ever
// failed, so that the flaky tasks are read from a few thousand rows rather than by looking every
// failure's key up among the whole history. Its trigger keeps it current on every recorded
// execution, whichever vx writes; migration 3 creates both and fills the table from the history.
const (
	keyOutcomesTable = `CREATE TABLE IF NOT EXISTS key_outcomes (
		task_id TEXT NOT NULL,
		hash TEXT NOT NULL,
		passed INTEGER NOT NULL DEFAULT 0,
		failed INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY (task_id, hash)
	)`
	keyOutcomesTrigger = `CREATE TRIGGER IF NOT EXISTS key_outcomes_record AFTER INSERT ON executions
		WHEN NEW.hash != '' AND NEW.status IN ('hit', 'miss', 'failed', 'timedOut')
		BEGIN
			INSERT INTO key_outcomes (task_id, hash, passed, failed)
			VALUES (NEW.task_id, NEW.hash, NEW.status IN ('hit', 'miss'), NEW.status IN ('failed', 'timedOut'))
			ON CONFLICT (task_id, hash) DO UPDATE SET passed = max(passed, excluded.passed), failed = max(failed, excluded.failed);
		END`
	keyOutcomesFill = `INSERT OR REPLACE INTO key_outcomes (task_id, hash, passed, failed)
		SELECT task_id, hash, max(status IN ('hit', 'miss')), max(status IN ('failed', 'timedOut'))
		FROM executions WHERE hash != '' AND status IN ('hit', 'miss', 'failed', 'timedOut') GROUP BY task_id, hash`
)

// FlakyTasks answers the tasks of which one cache key both passed and failed, sorted.
func (s *Store) FlakyTasks(ctx context.Context) ([]string, error) {
	out := []string{}
	if s.db == nil {
		return out, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT task_id FROM key_outcomes WHERE passed AND failed ORDER BY task_id`)
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
