package store

import (
	"context"
	"fmt"
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

// Record writes a batch in one transaction.
func (s *Store) Record(ctx context.Context, b Batch) error {
	if b.Empty() {
		return nil
	}
	if err := s.writable(); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("record executions: %w", err)
	}
	defer tx.Rollback()
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
		stmt, err := tx.PrepareContext(ctx, insertExecutionSQL)
		if err != nil {
			return fmt.Errorf("record executions: %w", err)
		}
		defer stmt.Close()
		for _, e := range b.Executions {
			if err := insertExecution(ctx, stmt, e); err != nil {
				return err
			}
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
