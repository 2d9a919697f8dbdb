package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// Run statuses as recorded in the index.
const (
	RunRunning     = "running"
	RunOK          = "ok"
	RunFailed      = "failed"
	RunCancelled   = "cancelled"
	RunInterrupted = "interrupted" // the process died before it finished the row
)

// Run is one row of the runs table.
type Run struct {
	ID          string
	Started     time.Time
	Finished    time.Time // zero while running
	Status      string
	ExitCode    int
	PID         int
	Host        string
	Args        []string
	Requested   []string
	TaskCount   int
	Concurrency int
}

// Execution is one task of one run.
type Execution struct {
	RunID        string
	TaskID       string
	Project      string
	Task         string
	Ord          int
	Status       string
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
	LogSource         string // "cache", "failure" or ""
}

// crockford is the alphabet of run ids: sortable as text, no ambiguous letters.
const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

// NewRunID answers a sortable, unique run id: 10 characters of milliseconds, 16 of randomness.
func NewRunID(now time.Time) string {
	var b [26]byte
	t := uint64(now.UnixMilli())
	for i := 9; i >= 0; i-- {
		b[i] = crockford[t&31]
		t >>= 5
	}
	var r [16]byte
	_, _ = rand.Read(r[:])
	for i, x := range r {
		b[10+i] = crockford[x&31]
	}
	return string(b[:])
}

func (s *Store) writable() error {
	if s.db == nil || s.readOnly {
		return errors.New("the index is open read-only")
	}
	return nil
}

// BeginRun records a run as running. Runs of this host whose process is gone are marked
// interrupted first, so a crashed run never reads as still running.
func (s *Store) BeginRun(ctx context.Context, r Run) error {
	if err := s.writable(); err != nil {
		return err
	}
	if err := s.markInterrupted(ctx, r.Host); err != nil {
		return err
	}
	args, _ := json.Marshal(nonNil(r.Args))
	req, _ := json.Marshal(nonNil(r.Requested))
	_, err := s.db.ExecContext(ctx, `INSERT INTO runs (id, started_ms, status, pid, host, args, requested, task_count, concurrency)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, ms(r.Started), RunRunning, r.PID, r.Host, string(args), string(req), r.TaskCount, r.Concurrency)
	if err != nil {
		return fmt.Errorf("record run %s: %w", r.ID, err)
	}
	return nil
}

func (s *Store) markInterrupted(ctx context.Context, host string) error {
	rows, err := s.db.QueryContext(ctx, `SELECT id, pid FROM runs WHERE status = ? AND host = ?`, RunRunning, host)
	if err != nil {
		return fmt.Errorf("read runs: %w", err)
	}
	var dead []string
	for rows.Next() {
		var id string
		var pid int
		if err := rows.Scan(&id, &pid); err != nil {
			rows.Close()
			return fmt.Errorf("read runs: %w", err)
		}
		if !processAlive(pid) {
			dead = append(dead, id)
		}
	}
	rows.Close()
	for _, id := range dead {
		if _, err := s.db.ExecContext(ctx, `UPDATE runs SET status = ?, exit_code = 1 WHERE id = ? AND status = ?`,
			RunInterrupted, id, RunRunning); err != nil {
			return fmt.Errorf("mark run %s interrupted: %w", id, err)
		}
	}
	return nil
}

func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// FinishRun sets a run's final status and exit code.
func (s *Store) FinishRun(ctx context.Context, id, status string, exitCode int, finished time.Time) error {
	if err := s.writable(); err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE runs SET status = ?, exit_code = ?, finished_ms = ? WHERE id = ?`,
		status, exitCode, ms(finished), id); err != nil {
		return fmt.Errorf("finish run %s: %w", id, err)
	}
	return nil
}

// RecordExecution stores one task's execution.
func (s *Store) RecordExecution(ctx context.Context, e Execution) error {
	if err := s.writable(); err != nil {
		return err
	}
	return insertExecution(ctx, queryExecer{s.db, insertExecutionSQL}, e)
}

const insertExecutionSQL = `INSERT OR REPLACE INTO executions (run_id, task_id, project, task, ord, status, exit_code,
		started_ms, duration_ms, user_cpu_ms, sys_cpu_ms, peak_rss, hash, cache_source, saved_ms, blocked_by, timed_out,
		sandbox_violations, not_ready, log_blob, log_source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

type execer interface {
	ExecContext(ctx context.Context, args ...any) (sql.Result, error)
}

type queryExecer struct {
	q     querier
	query string
}

// ExecContext runs the query with args.
func (q queryExecer) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	return q.q.ExecContext(ctx, q.query, args...)
}

func insertExecution(ctx context.Context, q execer, e Execution) error {
	sv, _ := json.Marshal(nonNil(e.SandboxViolations))
	nr, _ := json.Marshal(nonNil(e.NotReady))
	var exit any
	if e.ExitCode != nil {
		exit = *e.ExitCode
	}
	_, err := q.ExecContext(ctx, e.RunID, e.TaskID, e.Project, e.Task, e.Ord, e.Status, exit, ms(e.Started), e.Duration.Milliseconds(),
		e.UserCPU.Milliseconds(), e.SysCPU.Milliseconds(), e.PeakRSSBytes, e.Hash, e.CacheSource, e.Saved.Milliseconds(),
		e.BlockedBy, boolInt(e.TimedOut), string(sv), string(nr), e.LogBlob, e.LogSource)
	if err != nil {
		return fmt.Errorf("record %s: %w", e.TaskID, err)
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

const runCols = `id, started_ms, coalesce(finished_ms, 0), status, coalesce(exit_code, 0), pid, host, args, requested, task_count, concurrency`

func scanRun(sc interface{ Scan(...any) error }) (Run, error) {
	var r Run
	var started, finished int64
	var args, req string
	if err := sc.Scan(&r.ID, &started, &finished, &r.Status, &r.ExitCode, &r.PID, &r.Host, &args, &req, &r.TaskCount, &r.Concurrency); err != nil {
		return r, err
	}
	r.Started = time.UnixMilli(started)
	if finished != 0 {
		r.Finished = time.UnixMilli(finished)
	}
	_ = json.Unmarshal([]byte(args), &r.Args)
	_ = json.Unmarshal([]byte(req), &r.Requested)
	return r, nil
}

// RunQuery narrows Runs.
type RunQuery struct {
	// Limit is the most runs answered (0: all).
	Limit int
	// Project keeps runs that executed a task of this project; Task keeps runs that executed a
	// task of this name (in any project); TaskID a run that executed this task.
	Project, Task, TaskID string
	// Failed keeps runs that did not end ok.
	Failed bool
}

// Runs answers recorded runs, newest first.
func (s *Store) Runs(ctx context.Context, q RunQuery) ([]Run, error) {
	if s.db == nil {
		return nil, nil
	}
	return runs(ctx, s.db, q)
}

func runs(ctx context.Context, db querier, q RunQuery) ([]Run, error) {
	query := `SELECT ` + runCols + ` FROM runs`
	var where []string
	var args []any
	if q.Project != "" || q.Task != "" || q.TaskID != "" {
		sub := `SELECT 1 FROM executions e WHERE e.run_id = runs.id`
		if q.Project != "" {
			sub += ` AND e.project = ?`
			args = append(args, q.Project)
		}
		if q.Task != "" {
			sub += ` AND e.task = ?`
			args = append(args, q.Task)
		}
		if q.TaskID != "" {
			sub += ` AND e.task_id = ?`
			args = append(args, q.TaskID)
		}
		where = append(where, `EXISTS (`+sub+`)`)
	}
	if q.Failed {
		where = append(where, `status NOT IN ('ok', 'running')`)
	}
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	query += ` ORDER BY id DESC`
	if q.Limit > 0 {
		query += fmt.Sprintf(` LIMIT %d`, q.Limit)
	}
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("read runs: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// RunByID answers one run; ok is false when there is none.
func (s *Store) RunByID(ctx context.Context, id string) (Run, bool, error) {
	if s.db == nil {
		return Run{}, false, nil
	}
	r, err := scanRun(s.db.QueryRowContext(ctx, `SELECT `+runCols+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, false, nil
	}
	if err != nil {
		return Run{}, false, fmt.Errorf("read run %s: %w", id, err)
	}
	return r, true, nil
}

// AmbiguousRunError is a run id prefix that names more than one run.
type AmbiguousRunError struct {
	Prefix     string
	Candidates []string
}

// Error names the prefix and its candidates.
func (e *AmbiguousRunError) Error() string {
	return fmt.Sprintf("run id %q is ambiguous: it starts %s", e.Prefix, strings.Join(e.Candidates, ", "))
}

// UnknownRunError is a run id that names no recorded run.
type UnknownRunError struct{ ID string }

// Error names the id.
func (e *UnknownRunError) Error() string { return fmt.Sprintf("no recorded run has id %q", e.ID) }

// ResolveRun answers the whole id of the run named by id or by a unique prefix of it.
func (s *Store) ResolveRun(ctx context.Context, prefix string) (string, error) {
	if prefix == "" {
		return "", errors.New("empty run id")
	}
	if s.db == nil {
		return "", &UnknownRunError{ID: prefix}
	}
	p := strings.ToLower(prefix)
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM runs WHERE id >= ? AND id < ? ORDER BY id LIMIT 11`, p, p+"\U0010FFFF")
	if err != nil {
		return "", fmt.Errorf("read runs: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return "", fmt.Errorf("read runs: %w", err)
		}
		if id == p {
			return id, nil
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("read runs: %w", err)
	}
	switch len(ids) {
	case 0:
		return "", &UnknownRunError{ID: prefix}
	case 1:
		return ids[0], nil
	}
	if len(ids) > 10 {
		ids = append(ids[:10], "…")
	}
	return "", &AmbiguousRunError{Prefix: prefix, Candidates: ids}
}

const execCols = `run_id, task_id, project, task, ord, status, exit_code, started_ms, duration_ms, user_cpu_ms, sys_cpu_ms,
	peak_rss, hash, cache_source, saved_ms, blocked_by, timed_out, sandbox_violations, not_ready, log_blob, log_source`

func scanExec(sc interface{ Scan(...any) error }) (Execution, error) {
	var e Execution
	var exit sql.NullInt64
	var started, dur, ucpu, scpu, saved int64
	var timedOut int
	var sv, nr string
	if err := sc.Scan(&e.RunID, &e.TaskID, &e.Project, &e.Task, &e.Ord, &e.Status, &exit, &started, &dur, &ucpu, &scpu,
		&e.PeakRSSBytes, &e.Hash, &e.CacheSource, &saved, &e.BlockedBy, &timedOut, &sv, &nr, &e.LogBlob, &e.LogSource); err != nil {
		return e, err
	}
	if exit.Valid {
		c := int(exit.Int64)
		e.ExitCode = &c
	}
	e.Started = time.UnixMilli(started)
	e.Duration = time.Duration(dur) * time.Millisecond
	e.UserCPU = time.Duration(ucpu) * time.Millisecond
	e.SysCPU = time.Duration(scpu) * time.Millisecond
	e.Saved = time.Duration(saved) * time.Millisecond
	e.TimedOut = timedOut != 0
	_ = json.Unmarshal([]byte(sv), &e.SandboxViolations)
	_ = json.Unmarshal([]byte(nr), &e.NotReady)
	return e, nil
}

func (s *Store) queryExecs(ctx context.Context, query string, args ...any) ([]Execution, error) {
	if s.db == nil {
		return nil, nil
	}
	return queryExecs(ctx, s.db, query, args...)
}

func queryExecs(ctx context.Context, db querier, query string, args ...any) ([]Execution, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read executions: %w", err)
	}
	defer rows.Close()
	var out []Execution
	for rows.Next() {
		e, err := scanExec(rows)
		if err != nil {
			return nil, fmt.Errorf("read executions: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Executions answers a run's task executions in the order they finished.
func (s *Store) Executions(ctx context.Context, runID string) ([]Execution, error) {
	return s.queryExecs(ctx, `SELECT `+execCols+` FROM executions WHERE run_id = ? ORDER BY ord`, runID)
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

// TaskExecutions answers executions, newest run first.
func (s *Store) TaskExecutions(ctx context.Context, q ExecQuery) ([]Execution, error) {
	var where []string
	var args []any
	if q.TaskID != "" {
		where = append(where, `task_id = ?`)
		args = append(args, q.TaskID)
	}
	if q.Project != "" {
		where = append(where, `project = ?`)
		args = append(args, q.Project)
	}
	if q.Task != "" {
		where = append(where, `task = ?`)
		args = append(args, q.Task)
	}
	if q.BeforeRun != "" {
		where = append(where, `run_id < ?`)
		args = append(args, q.BeforeRun)
	}
	query := `SELECT ` + execCols + ` FROM executions`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	query += ` ORDER BY run_id DESC, ord DESC`
	if q.Limit > 0 {
		query += fmt.Sprintf(` LIMIT %d`, q.Limit)
	}
	return s.queryExecs(ctx, query, args...)
}

// FailedExecutions answers a run's executions that failed or timed out, in the order they finished.
func (s *Store) FailedExecutions(ctx context.Context, runID string) ([]Execution, error) {
	return s.queryExecs(ctx, `SELECT `+execCols+` FROM executions WHERE run_id = ? AND status IN ('failed', 'timedOut') ORDER BY ord`, runID)
}

// Execution answers one task's execution in one run; ok is false when that run did not record it.
func (s *Store) Execution(ctx context.Context, runID, taskID string) (Execution, bool, error) {
	execs, err := s.queryExecs(ctx, `SELECT `+execCols+` FROM executions WHERE run_id = ? AND task_id = ?`, runID, taskID)
	if err != nil || len(execs) == 0 {
		return Execution{}, false, err
	}
	return execs[0], true, nil
}

// RecentDurations answers, for each task id, the durations of the executions that ran its command
// (miss or failed) among its last n executions, newest first. It reads two columns through the
// task index, one prepared query a task, so a dry run's p50 predictions stay cheap on a long
// history.
func (s *Store) RecentDurations(ctx context.Context, taskIDs []string, n int) (map[string][]time.Duration, error) {
	out := make(map[string][]time.Duration, len(taskIDs))
	if s.db == nil || len(taskIDs) == 0 {
		return out, nil
	}
	// The one definition of a timed execution (history.CountsForDuration): the command ran and passed.
	stmt, err := s.prepared(ctx, `SELECT status, duration_ms FROM executions WHERE task_id = ? AND status = 'miss' ORDER BY run_id DESC, ord DESC LIMIT ?`)
	if err != nil {
		return nil, fmt.Errorf("read recent durations: %w", err)
	}
	for _, id := range taskIDs {
		rows, err := stmt.QueryContext(ctx, id, n)
		if err != nil {
			return nil, fmt.Errorf("read recent durations of %s: %w", id, err)
		}
		for rows.Next() {
			var status string
			var ms int64
			if err := rows.Scan(&status, &ms); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read recent durations of %s: %w", id, err)
			}
			out[id] = append(out[id], time.Duration(ms)*time.Millisecond)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read recent durations of %s: %w", id, err)
		}
	}
	return out, nil
}
