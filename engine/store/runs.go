package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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
	// MemoryBudget is the memory the run's tasks reserved from, MemorySource where it came from.
	MemoryBudget int64
	MemorySource string
	// Tags are the run's key=value labels (vx run --tag), nil for none.
	Tags map[string]string
	// Context is where the run ran: the commit, the machine, the CI, vx's version.
	Context RunContext
}

// RunContext is where a run ran, as `vx last` answers it (the original's invocation fields):
// empty strings for what was not known (a folder outside git, a detached HEAD's branch).
type RunContext struct {
	CommitSHA string `json:"commitSha,omitempty"`
	Branch    string `json:"branch,omitempty"`
	// CI is true under a CI service (CI set); CIProvider names the one known.
	CI         bool   `json:"ci,omitempty"`
	CIProvider string `json:"ciProvider,omitempty"`
	OS         string `json:"os,omitempty"`
	Arch       string `json:"arch,omitempty"`
	VxVersion  string `json:"vxVersion,omitempty"`
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

// BeginRun begins a run. Runs of this host whose process is gone are marked interrupted first, so
// a crashed run never reads as still running. The run's row is not written yet: it is written
// (as running) in the transaction of the run's first executions (Record), or by FinishRun when
// the run recorded none, so that history never holds a run without the executions it had — after
// a full disk (ENOSPC), say. Once a commit of the run's executions fails, nothing more of the run
// is written, and FinishRun removes what was.
func (s *Store) BeginRun(ctx context.Context, r Run) error {
	if err := s.writable(); err != nil {
		return err
	}
	if err := s.markInterrupted(ctx, r.Host); err != nil {
		return err
	}
	s.runsMu.Lock()
	defer s.runsMu.Unlock()
	if s.runs == nil {
		s.runs = map[string]*openRun{}
	}
	s.runs[r.ID] = &openRun{run: r}
	return nil
}

// openRun is a run begun in this Store and not finished: whether its row is written yet, and
// whether a commit of its executions failed.
type openRun struct {
	run     Run
	written bool
	failed  bool
}

const insertRunSQL = `INSERT INTO runs (id, started_ms, status, pid, host, args, requested, task_count, concurrency,
		memory_budget, memory_source, tags, context) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// insertRun writes r's row, as running.
func insertRun(ctx context.Context, q querier, r Run) error {
	args, _ := json.Marshal(nonNil(r.Args))
	req, _ := json.Marshal(nonNil(r.Requested))
	tags := []byte("{}")
	if len(r.Tags) > 0 {
		tags, _ = json.Marshal(r.Tags)
	}
	rc, _ := json.Marshal(r.Context)
	if _, err := q.ExecContext(ctx, insertRunSQL, r.ID, ms(r.Started), RunRunning, r.PID, r.Host, string(args), string(req),
		r.TaskCount, r.Concurrency, r.MemoryBudget, r.MemorySource, string(tags), string(rc)); err != nil {
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

// FinishRun sets a run's final status and exit code. A run begun in this Store that recorded no
// execution gets its row now; one a commit of whose executions failed is removed with the
// executions it had (and has no row if none was written), so that history holds a run whole or
// not at all.
func (s *Store) FinishRun(ctx context.Context, id, status string, exitCode int, finished time.Time) error {
	if err := s.writable(); err != nil {
		return err
	}
	s.runsMu.Lock()
	open := s.runs[id]
	delete(s.runs, id)
	s.runsMu.Unlock()
	switch {
	case open != nil && open.failed:
		if !open.written {
			return nil
		}
		return s.removeRun(ctx, id)
	case open != nil && !open.written:
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("finish run %s: %w", id, err)
		}
		defer tx.Rollback()
		if err := insertRun(ctx, tx, open.run); err != nil {
			return err
		}
		if err := finishRun(ctx, tx, id, status, exitCode, finished); err != nil {
			return err
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("finish run %s: %w", id, err)
		}
		return nil
	}
	return finishRun(ctx, s.db, id, status, exitCode, finished)
}

func finishRun(ctx context.Context, q querier, id, status string, exitCode int, finished time.Time) error {
	if _, err := q.ExecContext(ctx, `UPDATE runs SET status = ?, exit_code = ?, finished_ms = ? WHERE id = ?`,
		status, exitCode, ms(finished), id); err != nil {
		return fmt.Errorf("finish run %s: %w", id, err)
	}
	return nil
}

// removeRun deletes a run's row and its executions in one transaction: some of its executions
// could not be written, and a run in history has all of them. Should the removal fail too, the
// row stays as running and reads as interrupted once its process is gone.
func (s *Store) removeRun(ctx context.Context, id string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("remove the incomplete run %s: %w", id, err)
	}
	defer tx.Rollback()
	for _, q := range []string{`DELETE FROM executions WHERE run_id = ?`, `DELETE FROM runs WHERE id = ?`} {
		if _, err := tx.ExecContext(ctx, q, id); err != nil {
			return fmt.Errorf("remove the incomplete run %s: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("remove the incomplete run %s: %w", id, err)
	}
	return nil
}

const runCols = `id, started_ms, coalesce(finished_ms, 0), status, coalesce(exit_code, 0), pid, host, args, requested, task_count, concurrency, memory_budget, memory_source`

// runColumns are the columns scanRun reads in an index of layout version: one older than the
// tags' (migration 10) reads none, one older than the context's (migration 15) no context.
func runColumns(version int) string {
	switch {
	case version < retriesVersion:
		return runCols + `, '{}', '{}'`
	case version < contextVersion:
		return runCols + `, tags, '{}'`
	}
	return runCols + `, tags, context`
}

// contextVersion is the layout that keeps where each run ran (migration 15).
const contextVersion = 15

func scanRun(sc scanner) (Run, error) {
	var r Run
	var started, finished int64
	var args, req, tags, rc string
	if err := sc.Scan(&r.ID, &started, &finished, &r.Status, &r.ExitCode, &r.PID, &r.Host, &args, &req, &r.TaskCount, &r.Concurrency, &r.MemoryBudget, &r.MemorySource, &tags, &rc); err != nil {
		return r, err
	}
	if err := jsonColumn(rc, "context", r.ID, &r.Context); err != nil {
		return r, err
	}
	if err := jsonColumn(tags, "tags", r.ID, &r.Tags); err != nil {
		return r, err
	}
	if len(r.Tags) == 0 {
		r.Tags = nil
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
	return runs(ctx, s.db, s.version, q)
}

func runs(ctx context.Context, db querier, version int, q RunQuery) ([]Run, error) {
	query := `SELECT ` + runColumns(version) + ` FROM runs`
	var where []string
	var args []any
	if q.Project != "" || q.Task != "" || q.TaskID != "" {
		sub := `SELECT 1 FROM executions e WHERE e.run_id = runs.id`
		if q.Project != "" {
			sub += ` AND e.task_id >= ? AND e.task_id < ? AND e.project = ?`
			args = projectArgs(q.Project, args...)
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
		where = append(where, `status NOT IN ('`+RunOK+`', '`+RunRunning+`')`)
	}
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	query += ` ORDER BY id DESC`
	if q.Limit > 0 {
		query += fmt.Sprintf(` LIMIT %d`, q.Limit)
	}
	return queryAll(ctx, db, "runs", scanRun, query, args...)
}

// RunByID answers one run; ok is false when there is none.
func (s *Store) RunByID(ctx context.Context, id string) (Run, bool, error) {
	if s.db == nil {
		return Run{}, false, nil
	}
	r, err := scanRun(s.db.QueryRowContext(ctx, `SELECT `+runColumns(s.version)+` FROM runs WHERE id = ?`, id))
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

// CountRuns answers how many runs started since the given time.
func (s *Store) CountRuns(ctx context.Context, since time.Time) (int, error) {
	if s.db == nil {
		return 0, nil
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE started_ms >= ?`, ms(since)).Scan(&n); err != nil {
		return 0, fmt.Errorf("count runs: %w", err)
	}
	return n, nil
}
