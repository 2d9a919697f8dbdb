package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
)

// A task is flaky when one of its cache keys both passed and failed: the same inputs gave both
// verdicts, in two runs or in two attempts of one run (an execution that passed after failed
// attempts, vx run --retry). An execution passed when it hit or ran and succeeded (a miss), failed when it failed or
// timed out; one without a key says nothing. This is the one definition: key_outcomes keeps it for
// the whole history (Store.FlakyTasks), and Snapshot.FlakyTasks finds it within a window of runs.
var (
	passed = []Status{StatusHit, StatusMiss}
	failed = []Status{StatusFailed, StatusTimedOut}

	passedStatuses  = sqlList(passed...)
	failedStatuses  = sqlList(failed...)
	verdictStatuses = sqlList(append(slices.Clone(passed), failed...)...) // passed or failed
)

// Passed reports whether an execution of that status passed: the verdict flaky is judged by.
func Passed(status Status) bool { return slices.Contains(passed, status) }

// Failed reports whether an execution of that status failed: the other verdict.
func Failed(status Status) bool { return slices.Contains(failed, status) }

// key_outcomes keeps, per task and cache key, whether an execution of it ever passed and ever
// failed, so that the flaky tasks are read from a few thousand rows rather than by looking every
// failure's key up among the whole history. Migration 3 creates it, fills it from the history and
// keeps it current with a trigger on every recorded execution; migration 8 drops the trigger,
// which made SQLite keep a statement journal for every execution inserted (a quarter of an
// all-hit run's record), and each write of executions upserts their outcomes itself
// (recordOutcomes), once per task and key in a batch. A vx older than layout 8 refuses the index
// rather than writing executions without their outcomes.
var (
	keyOutcomesTable = `CREATE TABLE IF NOT EXISTS key_outcomes (
		task_id TEXT NOT NULL,
		hash TEXT NOT NULL,
		passed INTEGER NOT NULL DEFAULT 0,
		failed INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY (task_id, hash)
	)`
	keyOutcomesTrigger = `CREATE TRIGGER IF NOT EXISTS key_outcomes_record AFTER INSERT ON executions
		WHEN NEW.hash != '' AND NEW.status IN ` + verdictStatuses + `
		BEGIN
			INSERT INTO key_outcomes (task_id, hash, passed, failed)
			VALUES (NEW.task_id, NEW.hash, NEW.status IN ` + passedStatuses + `, NEW.status IN ` + failedStatuses + `)
			ON CONFLICT (task_id, hash) DO UPDATE SET passed = max(passed, excluded.passed), failed = max(failed, excluded.failed);
		END`
	keyOutcomesFill = `INSERT OR REPLACE INTO key_outcomes (task_id, hash, passed, failed)
		SELECT task_id, hash, max(status IN ` + passedStatuses + `), max(status IN ` + failedStatuses + `)
		FROM executions WHERE hash != '' AND status IN ` + verdictStatuses + ` GROUP BY task_id, hash`
)

// upsertOutcomesSQL is the statement that upserts rows outcomes: a key's verdicts only grow, and
// one already known writes nothing.
func upsertOutcomesSQL(rows int) string {
	return `INSERT INTO key_outcomes (task_id, hash, passed, failed) VALUES ` + valuesRows(rows, 4) + `
		ON CONFLICT (task_id, hash) DO UPDATE SET passed = max(passed, excluded.passed), failed = max(failed, excluded.failed)
		WHERE passed < excluded.passed OR failed < excluded.failed`
}

// outcome is what the executions of one task and key said: passed, failed, or both.
type outcome struct{ passed, failed bool }

// outcomesOf answers the verdicts of execs by task and key: an execution without a key, or
// neither passed nor failed, says nothing.
func outcomesOf(execs []Execution) map[[2]string]outcome {
	of := map[[2]string]outcome{}
	for _, e := range execs {
		p, f := Passed(e.Status), Failed(e.Status) || e.FailedAttempts > 0
		if e.Hash == "" || (!p && !f) {
			continue
		}
		k := [2]string{e.TaskID, e.Hash}
		o := of[k]
		of[k] = outcome{passed: o.passed || p, failed: o.failed || f}
	}
	return of
}

// recordOutcomes upserts the outcomes of execs into key_outcomes, rowsPerStatement a statement.
func (s *Store) recordOutcomes(ctx context.Context, tx *sql.Tx, execs []Execution) error {
	of := outcomesOf(execs)
	if len(of) == 0 {
		return nil
	}
	keys := make([][2]string, 0, len(of))
	for k := range of {
		keys = append(keys, k)
	}
	return s.execRows(ctx, tx, len(keys), upsertOutcomesSQL,
		func(dst []any, i int) []any {
			o := of[keys[i]]
			return append(dst, keys[i][0], keys[i][1], boolInt(o.passed), boolInt(o.failed))
		},
		func(first, last int) string { return "record the outcomes of the cache keys of " + keys[first][0] })
}

// FlakyTasks answers the tasks of which one cache key both passed and failed, sorted.
func (s *Store) FlakyTasks(ctx context.Context) ([]string, error) {
	out := []string{}
	if s.db == nil {
		return out, nil
	}
	ids, err := queryAll(ctx, s.db, "flaky tasks", scanString,
		`SELECT DISTINCT task_id FROM key_outcomes WHERE passed AND failed ORDER BY task_id`)
	if err != nil {
		return nil, err
	}
	return append(out, ids...), nil
}

// FlakyTasks answers the tasks of the window of which one cache key both passed and failed within
// it.
func (sn *Snapshot) FlakyTasks(ctx context.Context, w Window) (map[string]bool, error) {
	out := map[string]bool{}
	if sn.q == nil {
		return out, nil
	}
	// Failures are few: look each one's key up among the same task's passes (same task id, so
	// the same project and task name: in scope), run by run of the window in the primary key.
	// The failures are found in the index (rowid IN …: the planner would otherwise walk the
	// window through the primary key and read every row).
	cond, args := w.where("e")
	args = append(args, w.Oldest, w.Newest)
	rows, err := sn.q.QueryContext(ctx, `SELECT DISTINCT f.task_id FROM executions f
		WHERE f.rowid IN (SELECT e.rowid FROM executions e WHERE `+cond+` AND +e.status IN `+failedStatuses+`)
		AND f.hash != '' AND EXISTS (SELECT 1 FROM runs r CROSS JOIN executions p ON p.run_id = r.id AND p.task_id = f.task_id
			WHERE r.id BETWEEN ? AND ? AND p.hash = f.hash AND +p.status IN `+passedStatuses+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("read flaky tasks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("read flaky tasks: %w", err)
		}
		out[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read flaky tasks: %w", err)
	}
	return out, nil
}

// retriesVersion is the layout that keeps each execution's failed attempts (migration 10).
const retriesVersion = 10

// RetriedPasses answers the tasks of the window that passed after failed attempts in one run
// (vx run --retry): flaky, though no run of them failed. They are read through
// executions_retried, which holds only such executions; an index older than the layout that
// keeps them has none.
func (sn *Snapshot) RetriedPasses(ctx context.Context, w Window) (map[string]bool, error) {
	out := map[string]bool{}
	if sn.q == nil || sn.version < retriesVersion {
		return out, nil
	}
	cond, args := w.where("r")
	ids, err := queryAll(ctx, sn.q, "retried tasks", scanString, `SELECT DISTINCT r.task_id FROM executions r INDEXED BY executions_retried
		WHERE `+cond+` AND r.failed_attempts > 0 AND r.hash != '' AND r.status IN `+passedStatuses, args...)
	for _, id := range ids {
		out[id] = true
	}
	return out, err
}
