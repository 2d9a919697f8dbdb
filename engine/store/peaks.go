package store

import (
	"context"
	"database/sql"
	"encoding/json"
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
// It reads three columns through the task index of the shared store's command runs, hundreds of
// tasks a query: the scheduler plans every run from it (each task's p50 and the peak RSS it
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
// store sh, newest first. It asks for recentRunsPerQuery tasks a statement: for each id (a row
// of json_each), the rowids of its last n runs from the task index, then those rows.
func (sh *sharedDB) recentCommandRuns(ctx context.Context, taskIDs []string, n int, out map[string][]CommandRun) error {
	stmt, err := sh.prepared(ctx, `SELECT j.value, c.status, c.duration_ms, c.peak_rss
		FROM json_each(?) AS j, command_runs AS c
		WHERE c.seq IN (SELECT seq FROM command_runs WHERE task_id = j.value ORDER BY seq DESC LIMIT ?)
		ORDER BY j.key, c.seq DESC`)
	if err != nil {
		return fmt.Errorf("read recent executions: %w", err)
	}
	for start := 0; start < len(taskIDs); start += recentRunsPerQuery {
		chunk := taskIDs[start:min(start+recentRunsPerQuery, len(taskIDs))]
		ids, err := json.Marshal(chunk)
		if err != nil {
			return fmt.Errorf("read recent executions: %w", err)
		}
		if err := scanCommandRuns(ctx, stmt, string(ids), n, out); err != nil {
			return fmt.Errorf("read recent executions of %s to %s: %w", chunk[0], chunk[len(chunk)-1], err)
		}
	}
	return nil
}

// recentRunsPerQuery is how many tasks' command runs one statement reads: a statement a task
// cost more than the rows it read (docs/performance.md, "G2 at full size").
const recentRunsPerQuery = 500

// scanCommandRuns runs stmt with the JSON array ids and the window n, appending each row to out
// under its task id.
func scanCommandRuns(ctx context.Context, stmt *sql.Stmt, ids string, n int, out map[string][]CommandRun) error {
	rows, err := stmt.QueryContext(ctx, ids, n)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var c CommandRun
		var ms int64
		if err := rows.Scan(&id, &c.Status, &ms, &c.PeakRSSBytes); err != nil {
			return err
		}
		c.Duration = time.Duration(ms) * time.Millisecond
		out[id] = append(out[id], c)
	}
	return rows.Err()
}
