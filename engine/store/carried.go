package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// carriedVersion is the layout that keeps the estimates carried from another machine
// (carried_estimates); an older index has none to answer.
const carriedVersion = 13

// carriedTable keeps what the scheduler plans a task from when this state folder has no command
// run of it: its p50 and peak RSS as another machine measured them (`vx history import`), and the
// time of the newest run they were measured from. One row a task: an import replaces a row only
// with a newer one, so importing a file twice leaves what importing it once did.
const carriedTable = `CREATE TABLE IF NOT EXISTS carried_estimates (
	task_id TEXT PRIMARY KEY,
	p50_ms INTEGER,
	peak_rss INTEGER NOT NULL DEFAULT 0,
	measured_ms INTEGER NOT NULL
)`

// Estimate is what the scheduler plans one task from: the p50 duration of its recent passing
// command runs (HasP50 false when none passed), the largest peak RSS of them all, and when the
// newest of them started.
type Estimate struct {
	TaskID       string
	P50          time.Duration
	HasP50       bool
	PeakRSSBytes int64
	MeasuredAt   time.Time
}

// CarriedEstimates answers every estimate carried into this state folder, by task id.
func (s *Store) CarriedEstimates(ctx context.Context) ([]Estimate, error) {
	if s.db == nil || s.version < carriedVersion {
		return nil, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT task_id, p50_ms, peak_rss, measured_ms FROM carried_estimates ORDER BY task_id`)
	if err != nil {
		return nil, fmt.Errorf("read carried estimates: %w", err)
	}
	defer rows.Close()
	var out []Estimate
	for rows.Next() {
		var e Estimate
		var p50 sql.NullInt64
		var at int64
		if err := rows.Scan(&e.TaskID, &p50, &e.PeakRSSBytes, &at); err != nil {
			return nil, fmt.Errorf("read carried estimates: %w", err)
		}
		e.P50, e.HasP50, e.MeasuredAt = time.Duration(p50.Int64)*time.Millisecond, p50.Valid, time.UnixMilli(at)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read carried estimates: %w", err)
	}
	return out, nil
}

// CarryEstimates keeps ests in one transaction: a task's estimate replaces the one kept only when
// it was measured later. It answers how many were added and how many replaced an older one; the
// rest were no newer than what the folder holds.
func (s *Store) CarryEstimates(ctx context.Context, ests []Estimate) (added, replaced int, err error) {
	if err := s.writable(); err != nil {
		return 0, 0, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("carry estimates: %w", err)
	}
	defer tx.Rollback()
	for _, e := range ests {
		var at int64
		switch err := tx.QueryRowContext(ctx, `SELECT measured_ms FROM carried_estimates WHERE task_id = ?`, e.TaskID).Scan(&at); {
		case err == sql.ErrNoRows:
			added++
		case err != nil:
			return 0, 0, fmt.Errorf("carry the estimate of %s: %w", e.TaskID, err)
		case e.MeasuredAt.UnixMilli() <= at:
			continue
		default:
			replaced++
		}
		var p50 sql.NullInt64
		if e.HasP50 {
			p50 = sql.NullInt64{Int64: e.P50.Milliseconds(), Valid: true}
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO carried_estimates (task_id, p50_ms, peak_rss, measured_ms)
			VALUES (?, ?, ?, ?)`, e.TaskID, p50, e.PeakRSSBytes, e.MeasuredAt.UnixMilli()); err != nil {
			return 0, 0, fmt.Errorf("carry the estimate of %s: %w", e.TaskID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, fmt.Errorf("carry estimates: %w", err)
	}
	return added, replaced, nil
}

// CommandRunTasks answers each task id with a command run in this state folder, with the start of
// its newest one.
func (s *Store) CommandRunTasks(ctx context.Context) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	if s.db == nil {
		return out, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT task_id, MAX(started_ms) FROM executions
		WHERE status IN `+ranStatuses+` GROUP BY task_id`)
	if err != nil {
		return nil, fmt.Errorf("read the tasks that ran: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var at int64
		if err := rows.Scan(&id, &at); err != nil {
			return nil, fmt.Errorf("read the tasks that ran: %w", err)
		}
		out[id] = time.UnixMilli(at)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the tasks that ran: %w", err)
	}
	return out, nil
}

// addCarried answers, for each of ids with no command run in out, its carried estimate as one
// command run: a pass of its p50 (a failure, for an estimate with no p50) at its peak RSS, which
// the scheduler's estimates read back as that p50 and peak.
func (s *Store) addCarried(ctx context.Context, ids []string, out map[string][]CommandRun) error {
	if s.version < carriedVersion {
		return nil
	}
	var stmt *sql.Stmt
	for _, id := range ids {
		if _, ok := out[id]; ok {
			continue
		}
		if stmt == nil {
			var err error
			if stmt, err = s.prepared(ctx, `SELECT p50_ms, peak_rss FROM carried_estimates WHERE task_id = ?`); err != nil {
				return fmt.Errorf("read carried estimates: %w", err)
			}
		}
		var p50 sql.NullInt64
		var peak int64
		switch err := stmt.QueryRowContext(ctx, id).Scan(&p50, &peak); {
		case err == sql.ErrNoRows:
			continue
		case err != nil:
			return fmt.Errorf("read the carried estimate of %s: %w", id, err)
		}
		run := CommandRun{Status: StatusFailed, PeakRSSBytes: peak}
		if p50.Valid {
			run.Status, run.Duration = StatusMiss, time.Duration(p50.Int64)*time.Millisecond
		}
		out[id] = []CommandRun{run}
	}
	return nil
}
