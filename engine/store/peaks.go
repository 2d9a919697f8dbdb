package store

import (
	"context"
	"fmt"
	"time"
)

// CommandRun is one execution that ran its task's command: its status (miss, failed or
// timedOut), how long it took and its peak RSS.
type CommandRun struct {
	Status       Status
	Duration     time.Duration
	PeakRSSBytes int64
}

// RecentCommandRuns answers, for each task id, its last n executions that ran its command (miss,
// failed or timedOut) in any checkout sharing the store, newest first; a task with none is absent.
// It reads three columns through the task index of the shared store's command runs, one prepared
// query a task: the scheduler plans every run from it (each task's p50 and the peak RSS it
// reserves), so it is what a full-hit run pays for its schedule. A task
// with none that has an estimate carried from another machine (CarryEstimates) answers it as
// one command run of its p50 and peak RSS.
func (s *Store) RecentCommandRuns(ctx context.Context, taskIDs []string, n int) (map[string][]CommandRun, error) {
	out := make(map[string][]CommandRun, len(taskIDs))
	if len(taskIDs) == 0 {
		return out, nil
	}
	if s.sh != nil {
		if err := s.sh.recentCommandRuns(ctx, taskIDs, n, out); err != nil {
			return nil, err
		}
	}
	// A task that never ran here is planned from what another machine measured, where it was
	// carried over (carried.go); a shared store not made yet holds no run of any.
	if err := s.addCarried(ctx, taskIDs, out); err != nil {
		return nil, err
	}
	return out, nil
}

// recentCommandRuns fills out with the last n command runs of each of taskIDs in the shared
// store sh, newest first.
func (sh *sharedDB) recentCommandRuns(ctx context.Context, taskIDs []string, n int, out map[string][]CommandRun) error {
	stmt, err := sh.prepared(ctx, `SELECT status, duration_ms, peak_rss FROM command_runs
		WHERE task_id = ? ORDER BY seq DESC LIMIT ?`)
	if err != nil {
		return fmt.Errorf("read recent executions: %w", err)
	}
	for _, id := range taskIDs {
		rows, err := stmt.QueryContext(ctx, id, n)
		if err != nil {
			return fmt.Errorf("read recent executions of %s: %w", id, err)
		}
		for rows.Next() {
			var c CommandRun
			var ms int64
			if err := rows.Scan(&c.Status, &ms, &c.PeakRSSBytes); err != nil {
				rows.Close()
				return fmt.Errorf("read recent executions of %s: %w", id, err)
			}
			c.Duration = time.Duration(ms) * time.Millisecond
			out[id] = append(out[id], c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read recent executions of %s: %w", id, err)
		}
	}
	return nil
}
