package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Execution is one task of one run.
type Execution struct {
	RunID        string
	TaskID       string
	Project      string
	Task         string
	Ord          int
	Status       Status
	ExitCode     *int
	Started      time.Time
	Duration     time.Duration
	UserCPU      time.Duration
	SysCPU       time.Duration
	PeakRSSBytes int64
	Hash         string
	CacheSource  string // "local" for a hit
	// Saved is how long the cached execution took, for a hit.
	Saved             time.Duration
	BlockedBy         string
	TimedOut          bool
	SandboxViolations []string
	NotReady          []string
	LogBlob           string
	LogSource         string // "cache", "failure", "uncached" or ""
	// ReservedBytes is the memory the scheduler reserved for the task from the run's budget.
	ReservedBytes int64
	// Waited is how long the task waited for another process that was running it (the task lock).
	Waited time.Duration
	// RestoredFiles is, for a hit, how many output files it restored (the cache entry's
	// listing); nil otherwise.
	RestoredFiles *int
	// FailedAttempts counts the attempts of the task that failed before this one, in the same run
	// (vx run --retry): one that passed after them is flaky.
	FailedAttempts int
	// NotCached says why a task that ran and passed stored no cache entry ("" when it did, or
	// did not pass).
	NotCached string
	// Forced says that the task ran because the run ignored the cache (--force); its status
	// stays miss (or failed), and Reported answers forced for a forced miss.
	Forced bool
	// Executor names where the task's command ran, "local" or "remote", in a run that executes
	// remotely; "" otherwise (and for a task whose command did not run).
	Executor string
	// OutputsRemote says that the task's outputs stayed remote (vx run --download): its cache
	// entry lists them, their blobs are in a REAPI CAS, and nothing of them was written here.
	OutputsRemote bool
}

// executionColumns are the executions table's columns, written once: insertExecutions writes
// them and scanExec reads them in this order (versioned last: columns an older index lacks,
// read as their zero), and listedColumns is the part a window's listing reads.
var executionColumns = []string{"run_id", "task_id", "project", "task", "ord", "status", "exit_code",
	"started_ms", "duration_ms", "user_cpu_ms", "sys_cpu_ms", "peak_rss", "hash", "cache_source", "saved_ms",
	"blocked_by", "timed_out", "sandbox_violations", "not_ready", "log_blob", "log_source", "reserved_bytes", "waited_ms", "restored_files", "failed_attempts",
	"not_cached", "forced", "executor", "outputs_remote"}

var execCols = strings.Join(executionColumns[:len(executionColumns)-len(versionedColumns)], ", ")

// listedColumns are the columns of a Listed execution, as Snapshot.Listed scans them.
const listedColumns = `run_id, task_id, status, exit_code, duration_ms, hash, blocked_by, timed_out,
	nullif(sandbox_violations, '[]'), nullif(not_ready, '[]')`

// executionArgs appends the values of e's row to dst, in the order of executionColumns.
func executionArgs(dst []any, e Execution) []any {
	sv, _ := json.Marshal(nonNil(e.SandboxViolations))
	nr, _ := json.Marshal(nonNil(e.NotReady))
	var exit, restored any
	if e.ExitCode != nil {
		exit = *e.ExitCode
	}
	if e.RestoredFiles != nil {
		restored = *e.RestoredFiles
	}
	return append(dst, e.RunID, e.TaskID, e.Project, e.Task, e.Ord, e.Status, exit, ms(e.Started), e.Duration.Milliseconds(),
		e.UserCPU.Milliseconds(), e.SysCPU.Milliseconds(), e.PeakRSSBytes, e.Hash, e.CacheSource, e.Saved.Milliseconds(),
		e.BlockedBy, boolInt(e.TimedOut), string(sv), string(nr), e.LogBlob, e.LogSource, e.ReservedBytes, waitedMs(e.Waited), restored, e.FailedAttempts,
		e.NotCached, boolInt(e.Forced), e.Executor, boolInt(e.OutputsRemote))
}

// insertExecutions writes execs in tx, rowsPerStatement rows a statement: a run of 300 hits binds
// and steps 3 statements rather than 300, which was a third of recording them.
func (s *Store) insertExecutions(ctx context.Context, tx *sql.Tx, execs []Execution) error {
	return s.execRows(ctx, tx, len(execs), insertExecutionsSQL,
		func(dst []any, i int) []any { return executionArgs(dst, execs[i]) },
		func(first, last int) string {
			return fmt.Sprintf("record the executions of %s to %s", execs[first].TaskID, execs[last].TaskID)
		})
}

// insertExecutionsSQL is the statement that inserts rows executions.
func insertExecutionsSQL(rows int) string {
	return "INSERT OR REPLACE INTO executions (" + strings.Join(executionColumns, ", ") + ") VALUES " +
		valuesRows(rows, len(executionColumns))
}

// versionedColumns are the last columns of executionColumns, each with the layout that added
// it and what an older index reads in its place.
var versionedColumns = []struct {
	version   int
	name, old string
}{
	{6, "waited_ms", "0"},         // how long each task waited (migration 6)
	{7, "restored_files", "NULL"}, // how many files each hit restored (migration 7)
	{10, "failed_attempts", "0"},  // the attempts that failed before the one recorded (migration 10)
	{11, "not_cached", "''"},      // why a passing task stored no entry (migration 11)
	{11, "forced", "0"},           // whether --force made it run (migration 11)
	{14, "executor", "''"},        // where its command ran (migration 14)
	{16, "outputs_remote", "0"},   // whether its outputs stayed remote (migration 16)
}

// execColumns are the columns scanExec reads, in an index of s's layout: one older than a
// column's layout reads its zero.
func (s *Store) execColumns() string {
	cols := execCols
	for _, c := range versionedColumns {
		if s.version < c.version {
			cols += ", " + c.old
		} else {
			cols += ", " + c.name
		}
	}
	return cols
}

func scanExec(sc scanner) (Execution, error) {
	var e Execution
	var exit, restored sql.NullInt64
	var started, dur, ucpu, scpu, saved, waited int64
	var timedOut, forced, outputsRemote int
	var sv, nr string
	if err := sc.Scan(&e.RunID, &e.TaskID, &e.Project, &e.Task, &e.Ord, &e.Status, &exit, &started, &dur, &ucpu, &scpu,
		&e.PeakRSSBytes, &e.Hash, &e.CacheSource, &saved, &e.BlockedBy, &timedOut, &sv, &nr, &e.LogBlob, &e.LogSource, &e.ReservedBytes, &waited, &restored, &e.FailedAttempts,
		&e.NotCached, &forced, &e.Executor, &outputsRemote); err != nil {
		return e, err
	}
	e.Forced, e.OutputsRemote = forced != 0, outputsRemote != 0
	if exit.Valid {
		c := int(exit.Int64)
		e.ExitCode = &c
	}
	if restored.Valid {
		n := int(restored.Int64)
		e.RestoredFiles = &n
	}
	e.Started = time.UnixMilli(started)
	e.Duration = time.Duration(dur) * time.Millisecond
	e.UserCPU = time.Duration(ucpu) * time.Millisecond
	e.SysCPU = time.Duration(scpu) * time.Millisecond
	e.Saved = time.Duration(saved) * time.Millisecond
	e.Waited = time.Duration(waited) * time.Millisecond
	e.TimedOut = timedOut != 0
	row := e.RunID + " " + e.TaskID
	if err := jsonColumn(sv, "sandbox_violations", row, &e.SandboxViolations); err != nil {
		return e, err
	}
	return e, jsonColumn(nr, "not_ready", row, &e.NotReady)
}

func (s *Store) queryExecs(ctx context.Context, query string, args ...any) ([]Execution, error) {
	if s.db == nil {
		return nil, nil
	}
	return queryExecs(ctx, s.db, query, args...)
}

func queryExecs(ctx context.Context, db querier, query string, args ...any) ([]Execution, error) {
	return queryAll(ctx, db, "executions", scanExec, query, args...)
}

// Executions answers a run's task executions in the order they finished.
func (s *Store) Executions(ctx context.Context, runID string) ([]Execution, error) {
	return s.queryExecs(ctx, `SELECT `+s.execColumns()+` FROM executions WHERE run_id = ? ORDER BY ord`, runID)
}

// ExecQuery narrows TaskExecutions.
type ExecQuery struct {
	TaskID  string // one task
	Project string // every task of a project
	Task    string // a task name in every project
	// BeforeRun keeps executions of runs older than this run id.
	BeforeRun string
	// Limit is the most answered (0: all), newest first.
	Limit int
}

// TaskExecutions answers executions, newest run first. Those of a task or a project are found
// through the runs, newest first, and each run's rows of that task id (or range) in the primary
// key: the index has no index by task, whose every leaf a full hit rewrote (migration 17).
func (s *Store) TaskExecutions(ctx context.Context, q ExecQuery) ([]Execution, error) {
	var where []string
	var args []any
	if q.TaskID != "" {
		where = append(where, `e.task_id = ?`)
		args = append(args, q.TaskID)
	}
	if q.Project != "" {
		lo, hi := projectRange(q.Project)
		where = append(where, `e.task_id >= ? AND e.task_id < ? AND e.project = ?`)
		args = append(args, lo, hi, q.Project)
	}
	if q.Task != "" {
		where = append(where, `e.task = ?`)
		args = append(args, q.Task)
	}
	if q.BeforeRun != "" {
		where = append(where, `e.run_id < ?`)
		args = append(args, q.BeforeRun)
	}
	order := ` ORDER BY run_id DESC, ord DESC`
	limit := ""
	if q.Limit > 0 {
		limit = fmt.Sprintf(` LIMIT %d`, q.Limit)
	}
	query := `SELECT ` + s.execColumns() + ` FROM executions`
	switch {
	case q.TaskID != "" || q.Project != "":
		// The runs are the outer loop (CROSS JOIN keeps them so); their ids order the rows.
		query += ` WHERE rowid IN (SELECT e.rowid FROM runs r CROSS JOIN executions e ON e.run_id = r.id
			WHERE ` + strings.Join(where, " AND ") + ` ORDER BY r.id DESC, e.ord DESC` + limit + `)` + order
	case len(where) > 0:
		query += ` AS e WHERE ` + strings.Join(where, " AND ") + order + limit
	default:
		query += order + limit
	}
	return s.queryExecs(ctx, query, args...)
}

// FailedExecutions answers a run's executions that failed or timed out, in the order they finished.
func (s *Store) FailedExecutions(ctx context.Context, runID string) ([]Execution, error) {
	return s.queryExecs(ctx, `SELECT `+s.execColumns()+` FROM executions WHERE run_id = ? AND status IN `+failedOrTimed+` ORDER BY ord`, runID)
}

// Execution answers one task's execution in one run; ok is false when that run did not record it.
func (s *Store) Execution(ctx context.Context, runID, taskID string) (Execution, bool, error) {
	if s.db == nil {
		return Execution{}, false, nil
	}
	// Prepared once for the store's life: a reader of a log page by page asks this of every page.
	stmt, err := s.prepared(ctx, `SELECT `+s.execColumns()+` FROM executions WHERE run_id = ? AND task_id = ?`)
	if err != nil {
		return Execution{}, false, fmt.Errorf("read executions: %w", err)
	}
	execs, err := queryExecs(ctx, preparedQuery{stmt}, "", runID, taskID)
	if err != nil || len(execs) == 0 {
		return Execution{}, false, err
	}
	return execs[0], true, nil
}

// ExecutionLog answers, of a task's execution in a run, what a reader of its stored log needs:
// its status and the stored log's blob and source ("" when none is kept). One prepared query of
// three columns: a log read page by page asks it of every page.
func (s *Store) ExecutionLog(ctx context.Context, runID, taskID string) (status Status, blob, source string, ok bool, err error) {
	if s.db == nil {
		return "", "", "", false, nil
	}
	stmt, err := s.prepared(ctx, `SELECT status, log_blob, log_source FROM executions WHERE run_id = ? AND task_id = ?`)
	if err != nil {
		return "", "", "", false, fmt.Errorf("read executions: %w", err)
	}
	var st string
	switch err := stmt.QueryRowContext(ctx, runID, taskID).Scan(&st, &blob, &source); {
	case errors.Is(err, sql.ErrNoRows):
		return "", "", "", false, nil
	case err != nil:
		return "", "", "", false, fmt.Errorf("read the execution of %s in run %s: %w", taskID, runID, err)
	}
	return Status(st), blob, source, true, nil
}

// waitedMs is a wait in whole milliseconds, rounded up: a task that waited at all says so, though
// the other process ended within the millisecond.
func waitedMs(d time.Duration) int64 {
	return (d + time.Millisecond - 1).Milliseconds()
}

// projectRange answers the range [lo, hi) of the task ids of project's tasks: each is the project's
// name, "#" and the task's name, and "$" follows "#". The executions of a project are read by it
// within each run (the primary key, or executions_by_run); a query keeps `project = ?` beside it
// where it reads the rows anyway.
func projectRange(project string) (lo, hi string) { return project + "#", project + "$" }

// projectArgs answers args followed by the arguments of `task_id >= ? AND task_id < ? AND
// project = ?` for project.
func projectArgs(project string, args ...any) []any {
	lo, hi := projectRange(project)
	return append(args, lo, hi, project)
}
