package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Batch is what a run records in one transaction: finished executions, the manifests of their keys,
// and the cache entries they hit.
type Batch struct {
	Executions []Execution
	Manifests  []ManifestRow
	// Touched are cache keys hit at TouchedAt.
	Touched   []string
	TouchedAt time.Time
}

// Empty reports whether the batch holds nothing.
func (b *Batch) Empty() bool {
	return len(b.Executions) == 0 && len(b.Manifests) == 0 && len(b.Touched) == 0
}

// Record writes a batch in one transaction. The first executions of a run begun in this Store
// bring its row with them (see BeginRun). Should the commit fail, each run it held is marked
// incomplete: later batches leave out its executions and FinishRun removes the run.
func (s *Store) Record(ctx context.Context, b Batch) error {
	if b.Empty() {
		return nil
	}
	if err := s.writable(); err != nil {
		return err
	}
	var runs []batchRun
	b.Executions, runs = s.openRunsOf(b.Executions)
	if b.Empty() {
		return nil
	}
	err := s.record(ctx, b, runs)
	s.runsMu.Lock()
	for _, r := range runs {
		if err != nil {
			r.open.failed = true
		} else if r.unwritten {
			r.open.written = true
		}
	}
	s.runsMu.Unlock()
	if err != nil {
		return err
	}
	// The shared store's part fails alone: the history it follows is written, and stays.
	return s.recordShared(ctx, b)
}

// batchRun is an open run that a batch records executions of.
type batchRun struct {
	open *openRun
	// unwritten: the run's row is not written yet; this batch writes it.
	unwritten bool
}

// openRunsOf answers execs without those of runs marked incomplete, and the open runs the rest
// belong to.
func (s *Store) openRunsOf(execs []Execution) ([]Execution, []batchRun) {
	s.runsMu.Lock()
	defer s.runsMu.Unlock()
	var runs []batchRun
	kept := execs[:0:0]
	for _, e := range execs {
		open := s.runs[e.RunID]
		if open != nil && open.failed {
			continue
		}
		kept = append(kept, e)
		if open != nil && !slices.ContainsFunc(runs, func(r batchRun) bool { return r.open == open }) {
			runs = append(runs, batchRun{open: open, unwritten: !open.written})
		}
	}
	return kept, runs
}

func (s *Store) record(ctx context.Context, b Batch, runs []batchRun) error {
	// The outcomes are at most one an execution.
	for _, sqlOf := range []func(int) string{insertExecutionsSQL, upsertOutcomesSQL} {
		if err := s.prepareFullRows(ctx, len(b.Executions), sqlOf); err != nil {
			return fmt.Errorf("record executions: %w", err)
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("record executions: %w", err)
	}
	defer tx.Rollback()
	for _, r := range runs {
		if r.unwritten {
			if err := insertRun(ctx, tx, r.open.run); err != nil {
				return err
			}
		}
	}
	if len(b.Manifests) > 0 {
		stmt, err := tx.PrepareContext(ctx, insertManifestSQL)
		if err != nil {
			return fmt.Errorf("record manifests: %w", err)
		}
		defer stmt.Close()
		for _, m := range b.Manifests {
			if _, err := stmt.ExecContext(ctx, m.Hash, m.TaskID, string(m.Manifest)); err != nil {
				return fmt.Errorf("record manifest of %s: %w", m.TaskID, err)
			}
		}
	}
	if len(b.Executions) > 0 {
		if err := s.insertExecutions(ctx, tx, b.Executions); err != nil {
			return err
		}
		if err := s.recordOutcomes(ctx, tx, b.Executions); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("record executions: %w", err)
	}
	return nil
}

// recordShared writes a batch's part of the shared store in one transaction of its own, after the
// checkout's: the entries hit (their last use), the command runs (durations and peaks) and the
// failure logs the history now refers to. It is written only for what the history holds, and its
// failure (a full disk, say) loses an estimate or a last use, never the history.
func (s *Store) recordShared(ctx context.Context, b Batch) error {
	var ran []Execution
	var kept []string
	for _, e := range b.Executions {
		if e.Status.Ran() {
			ran = append(ran, e)
		}
		if e.LogSource == "failure" && e.LogBlob != "" {
			kept = append(kept, e.LogBlob)
		}
	}
	if len(b.Touched) == 0 && len(ran) == 0 && len(kept) == 0 {
		return nil
	}
	tx, err := s.sh.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("record into the shared store: %w", err)
	}
	defer tx.Rollback()
	if err := touchEntries(ctx, tx, b.Touched, b.TouchedAt); err != nil {
		return err
	}
	if err := insertCommandRuns(ctx, tx, ran, s.checkout); err != nil {
		return err
	}
	if err := insertKeptBlobs(ctx, tx, kept, s.checkout, ms(s.now())); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("record into the shared store: %w", err)
	}
	return nil
}

// touchEntries records the last use of the entries hit.
func touchEntries(ctx context.Context, tx *sql.Tx, touched []string, at time.Time) error {
	for start := 0; start < len(touched); start += 500 {
		chunk := touched[start:min(start+500, len(touched))]
		args := make([]any, 0, len(chunk)+1)
		args = append(args, ms(at))
		for _, h := range chunk {
			args = append(args, h)
		}
		q := `UPDATE cache_entries SET last_used_ms = ? WHERE hash IN (?` + strings.Repeat(", ?", len(chunk)-1) + `)`
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("touch cache entries: %w", err)
		}
	}
	return nil
}

// insertCommandRuns appends the command runs of execs, in their order.
func insertCommandRuns(ctx context.Context, tx *sql.Tx, execs []Execution, checkout string) error {
	if len(execs) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO command_runs (task_id, status, duration_ms, peak_rss, checkout) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("record command runs: %w", err)
	}
	defer stmt.Close()
	for _, e := range execs {
		if _, err := stmt.ExecContext(ctx, e.TaskID, e.Status, e.Duration.Milliseconds(), e.PeakRSSBytes, checkout); err != nil {
			return fmt.Errorf("record the command run of %s: %w", e.TaskID, err)
		}
	}
	return nil
}

// insertKeptBlobs records failure logs a checkout's history refers to.
func insertKeptBlobs(ctx context.Context, tx *sql.Tx, blobs []string, checkout string, nowMs int64) error {
	for _, b := range blobs {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO kept_blobs (blob, checkout, kept_ms) VALUES (?, ?, ?)`, b, checkout, nowMs); err != nil {
			return fmt.Errorf("keep failure log %s: %w", short(b), err)
		}
	}
	return nil
}
