package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ManifestRow is the manifest of one cache key, recorded with a Batch.
type ManifestRow struct {
	Hash     string
	TaskID   string
	Manifest []byte
}

// insertManifestSQL keeps a key's first manifest: the same key is the same manifest.
const insertManifestSQL = `INSERT OR IGNORE INTO manifests (hash, task_id, manifest) VALUES (?, ?, ?)`

// Manifest answers the manifest of a cache key; ok is false when none was kept.
func (s *Store) Manifest(ctx context.Context, hash string) ([]byte, bool, error) {
	if s.db == nil || hash == "" {
		return nil, false, nil
	}
	var m string
	err := s.db.QueryRowContext(ctx, `SELECT manifest FROM manifests WHERE hash = ?`, hash).Scan(&m)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read manifest %s: %w", short(hash), err)
	}
	return []byte(m), true, nil
}
