package store

import (
	"context"
	"fmt"
)

// FileStat is what a file looked like when its content was hashed.
type FileStat struct {
	Size    int64
	MtimeNs int64
	CtimeNs int64
	Ino     uint64
	Hash    string
	// RecordedNs is when the hash was taken: a file whose mtime is that close to it may have
	// changed again within the same timestamp tick, so it is hashed again.
	RecordedNs int64
}

// FileStats loads the whole stat cache (root-relative path → stat).
func (s *Store) FileStats(ctx context.Context) (map[string]FileStat, error) {
	out := map[string]FileStat{}
	if s.db == nil {
		return out, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT path, size, mtime_ns, ctime_ns, ino, hash, recorded_ns FROM file_stats`)
	if err != nil {
		return nil, fmt.Errorf("read stat cache: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p string
		var f FileStat
		var ino int64
		if err := rows.Scan(&p, &f.Size, &f.MtimeNs, &f.CtimeNs, &ino, &f.Hash, &f.RecordedNs); err != nil {
			return nil, fmt.Errorf("read stat cache: %w", err)
		}
		f.Ino = uint64(ino)
		out[p] = f
	}
	return out, rows.Err()
}

// PutFileStats stores stat cache rows in one transaction.
func (s *Store) PutFileStats(ctx context.Context, stats map[string]FileStat) error {
	if len(stats) == 0 {
		return nil
	}
	if err := s.writable(); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("write stat cache: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO file_stats (path, size, mtime_ns, ctime_ns, ino, hash, recorded_ns)
		VALUES (?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("write stat cache: %w", err)
	}
	defer stmt.Close()
	for p, f := range stats {
		if _, err := stmt.ExecContext(ctx, p, f.Size, f.MtimeNs, f.CtimeNs, int64(f.Ino), f.Hash, f.RecordedNs); err != nil {
			return fmt.Errorf("write stat cache: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("write stat cache: %w", err)
	}
	return nil
}

// DeleteFileStats removes stat-cache rows by path.
func (s *Store) DeleteFileStats(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	if err := s.writable(); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("trim stat cache: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `DELETE FROM file_stats WHERE path = ?`)
	if err != nil {
		return fmt.Errorf("trim stat cache: %w", err)
	}
	defer stmt.Close()
	for _, p := range paths {
		if _, err := stmt.ExecContext(ctx, p); err != nil {
			return fmt.Errorf("trim stat cache: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("trim stat cache: %w", err)
	}
	return nil
}
