package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// Snapshot reads the index as of one moment: all its queries see the same runs and executions,
// even while a vx run records more.
type Snapshot struct {
	q querier // nil for a read-only store over an absent index
	// version is the index's layout version.
	version int
}

// Snapshot calls fn with a snapshot of the index: a read transaction, ended when fn returns.
func (s *Store) Snapshot(ctx context.Context, fn func(*Snapshot) error) error {
	if s.db == nil {
		return fn(&Snapshot{})
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("read %s: %w", IndexPath(s.dir), err)
	}
	defer tx.Rollback()
	return fn(&Snapshot{q: tx, version: s.version})
}

// Runs answers recorded runs, newest first, as Store.Runs does.
func (sn *Snapshot) Runs(ctx context.Context, q RunQuery) ([]Run, error) {
	if sn.q == nil {
		return nil, nil
	}
	return runs(ctx, sn.q, sn.version, q)
}

// Window is the executions of a stretch of recent runs: of the runs whose id lies between Oldest
// and Newest, narrowed to a project and a task name when given. Runs answers the runs with the
// greatest ids, so when Oldest and Newest are the last and the first run of a Runs answer of the
// same snapshot, Project and Task, the window holds exactly the executions of those runs (in scope)
// and no list of their ids is needed.
type Window struct {
	Oldest, Newest string
	Project, Task  string
}

// where answers the window's condition on the executions named by alias, and its arguments.
func (w Window) where(alias string) (string, []any) {
	cond := alias + `.run_id BETWEEN ? AND ?`
	args := []any{w.Oldest, w.Newest}
	if w.Project != "" {
		// A task id is its project's name, "#" and its name, and neither name holds a "#": the
		// range is the project's executions exactly, read off executions_by_run.
		lo, hi := projectRange(w.Project)
		cond += ` AND ` + alias + `.task_id >= ? AND ` + alias + `.task_id < ?`
		args = append(args, lo, hi)
	}
	if w.Task != "" {
		cond += ` AND ` + alias + `.task = ?`
		args = append(args, w.Task)
	}
	return cond, args
}

// The queries below read the window through the executions_by_run index (narrowed to a project,
// by the range of its task ids, which it holds too) and look table rows up only for the
// executions they answer whole: in the pure-Go SQLite, looking a row up and handing its columns
// over is most of an answer's time over a large window (figures: docs/performance.md, "Answers and
// records").

// StatusCounts answers, for each run of the window, its executions counted by status.
func (sn *Snapshot) StatusCounts(ctx context.Context, w Window) (map[string]map[Status]int, error) {
	out := map[string]map[Status]int{}
	if sn.q == nil {
		return out, nil
	}
	cond, args := w.where("e")
	rows, err := sn.q.QueryContext(ctx, `SELECT e.run_id, e.status, count(*) FROM executions e WHERE `+cond+` GROUP BY e.run_id, e.status`, args...)
	if err != nil {
		return nil, fmt.Errorf("count executions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var runID string
		var status Status
		var n int
		if err := rows.Scan(&runID, &status, &n); err != nil {
			return nil, fmt.Errorf("count executions: %w", err)
		}
		if out[runID] == nil {
			out[runID] = map[Status]int{}
		}
		out[runID][status] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count executions: %w", err)
	}
	return out, nil
}

// ExecStat is what per-task statistics read of an execution.
type ExecStat struct {
	TaskID       string
	Status       Status
	Duration     time.Duration
	CPU          time.Duration // user + system
	PeakRSSBytes int64
}

// EachExecStat calls fn with each execution of the window, newest run first, and within a run the
// last finished first.
func (sn *Snapshot) EachExecStat(ctx context.Context, w Window, fn func(ExecStat)) error {
	if sn.q == nil {
		return nil
	}
	cond, args := w.where("e")
	rows, err := sn.q.QueryContext(ctx, `SELECT e.task_id, e.status, e.duration_ms, e.user_cpu_ms + e.sys_cpu_ms, e.peak_rss
		FROM executions e WHERE `+cond+` ORDER BY e.run_id DESC, e.ord DESC`, args...)
	if err != nil {
		return fmt.Errorf("read executions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e ExecStat
		var dur, cpu int64
		if err := rows.Scan(&e.TaskID, &e.Status, &dur, &cpu, &e.PeakRSSBytes); err != nil {
			return fmt.Errorf("read executions: %w", err)
		}
		e.Duration = time.Duration(dur) * time.Millisecond
		e.CPU = time.Duration(cpu) * time.Millisecond
		fn(e)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read executions: %w", err)
	}
	return nil
}

// Listed is an execution of a run as a run history lists it.
type Listed struct {
	RunID             string
	TaskID            string
	Status            Status
	ExitCode          *int
	Duration          time.Duration
	Hash              string
	BlockedBy         string
	TimedOut          bool
	SandboxViolations []string
	NotReady          []string
}

// ListedExecutions answers executions of the window, newest run first and each run's in the order
// they finished: every execution of the runs named in whole, and of the runs named in part those
// that did not pass (neither a hit nor a miss, or with sandbox violations).
func (sn *Snapshot) ListedExecutions(ctx context.Context, w Window, whole, part []string) ([]Listed, error) {
	if sn.q == nil || len(whole)+len(part) == 0 {
		return nil, nil
	}
	in := func(ids []string) string { return `(?` + strings.Repeat(", ?", len(ids)-1) + `)` }
	cond, wargs := w.where("e")
	var queries []string
	var args []any
	if len(whole) > 0 {
		queries = append(queries, `SELECT e.rowid FROM executions e WHERE `+cond+` AND e.run_id IN `+in(whole))
		args = append(append(args, wargs...), strs(whole)...)
	}
	if len(part) > 0 {
		// The rows are chosen in the executions_by_run index; only those answered are read.
		queries = append(queries, `SELECT e.rowid FROM executions e WHERE `+cond+` AND e.run_id IN `+in(part)+`
			AND (e.status NOT IN `+passedStatuses+` OR e.sandbox_violations != '[]')`)
		args = append(append(args, wargs...), strs(part)...)
	}
	rows, err := sn.q.QueryContext(ctx, `SELECT `+listedColumns+` FROM executions
		WHERE rowid IN (`+strings.Join(queries, ` UNION ALL `)+`) ORDER BY run_id DESC, ord`, args...)
	if err != nil {
		return nil, fmt.Errorf("read executions: %w", err)
	}
	defer rows.Close()
	var out []Listed
	for rows.Next() {
		var e Listed
		var exit sql.NullInt64
		var dur int64
		var timedOut int
		var sv, nr sql.NullString
		if err := rows.Scan(&e.RunID, &e.TaskID, &e.Status, &exit, &dur, &e.Hash, &e.BlockedBy, &timedOut, &sv, &nr); err != nil {
			return nil, fmt.Errorf("read executions: %w", err)
		}
		if exit.Valid {
			c := int(exit.Int64)
			e.ExitCode = &c
		}
		e.Duration = time.Duration(dur) * time.Millisecond
		e.TimedOut = timedOut != 0
		row := e.RunID + " " + e.TaskID
		if err := jsonColumn(sv.String, "sandbox_violations", row, &e.SandboxViolations); err != nil {
			return nil, fmt.Errorf("read executions: %w", err)
		}
		if err := jsonColumn(nr.String, "not_ready", row, &e.NotReady); err != nil {
			return nil, fmt.Errorf("read executions: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read executions: %w", err)
	}
	return out, nil
}

func strs(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// SavedByRun answers, for each run of the window, how long the cached executions its hits restored
// took (what the hits saved), in milliseconds.
func (sn *Snapshot) SavedByRun(ctx context.Context, w Window) (map[string]int64, error) {
	out := map[string]int64{}
	if sn.q == nil {
		return out, nil
	}
	cond, args := w.where("e")
	rows, err := sn.q.QueryContext(ctx, `SELECT e.run_id, sum(e.saved_ms) FROM executions e WHERE `+cond+` AND +e.status = `+sqlHit+` GROUP BY e.run_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("read saved time: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var runID string
		var saved int64
		if err := rows.Scan(&runID, &saved); err != nil {
			return nil, fmt.Errorf("read saved time: %w", err)
		}
		out[runID] = saved
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read saved time: %w", err)
	}
	return out, nil
}
