package store

import (
	"context"
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
	return err
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
		if err := insertExecutions(ctx, tx, b.Executions); err != nil {
			return err
		}
		if err := recordOutcomes(ctx, tx, b.Executions); err != nil {
			return err
		}
	}
	for start := 0; start < len(b.Touched); start += 500 {
		chunk := b.Touched[start:min(start+500, len(b.Touched))]
		args := make([]any, 0, len(chunk)+1)
		args = append(args, ms(b.TouchedAt))
		for _, h := range chunk {
			args = append(args, h)
		}
		q := `UPDATE cache_entries SET last_used_ms = ? WHERE hash IN (?` + strings.Repeat(", ?", len(chunk)-1) + `)`
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("touch cache entries: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("record executions: %w", err)
	}
	return nil
}
