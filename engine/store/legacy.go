package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/vzn/vx/engine/atomicfile"
)

// sharedVersion is the checkout index's layout that no longer holds the cache entries: they live
// in the shared store (migration 12).
const sharedVersion = 12

// importLegacy carries what a checkout index of a layout before sharedVersion keeps for the
// shared store into it, inside the transaction that upgrades the index (tx, which migration 12
// then drops the entries from): the blobs of its cas/ first, then its cache entries, the command
// runs the scheduler estimates from and the failure logs its history refers to, in one transaction
// of the shared index. Nothing is dropped before it is carried: a crash in between leaves both, and
// the next open carries them again (an entry the shared store already holds stays as it is).
func (s *Store) importLegacy(ctx context.Context, tx *sql.Tx, version int) error {
	entries, err := legacyEntries(ctx, tx, version)
	if err != nil {
		return err
	}
	moved, err := s.moveLegacyBlobs()
	if err != nil {
		return err
	}
	runs, err := legacyCommandRuns(ctx, tx)
	if err != nil {
		return err
	}
	kept, err := legacyKeptBlobs(ctx, tx)
	if err != nil {
		return err
	}
	if err := s.writeLegacy(ctx, entries, runs, kept); err != nil {
		return err
	}
	if len(entries) > 0 || moved > 0 {
		s.Migrated = fmt.Sprintf("moved %d cache entries and %d blobs from %s into the shared store %s",
			len(entries), moved, s.dir, s.sharedDir)
	}
	return nil
}

// legacyEntries reads the cache entries of a checkout index of an older layout.
func legacyEntries(ctx context.Context, tx *sql.Tx, version int) ([]Entry, error) {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type='table' AND name='cache_entries'`).Scan(&n); err != nil {
		return nil, fmt.Errorf("carry the cache entries: %w", err)
	}
	if n == 0 {
		return nil, nil
	}
	cols := legacyEntryCols
	if version < packedVersion {
		cols = `hash, task_id, project, command, outputs_blob, outputs, NULL, log_blob, size, duration_ms, exit_code, created_ms, last_used_ms`
	}
	entries, err := queryAll(ctx, tx, "cache entries", scanLegacyEntry, `SELECT `+cols+` FROM cache_entries`)
	if err != nil {
		return nil, fmt.Errorf("carry the cache entries: %w", err)
	}
	return entries, nil
}

// legacyEntryCols are the columns of the checkout index's cache entries before sharedVersion.
const legacyEntryCols = `hash, task_id, project, command, outputs_blob, outputs, listing, log_blob, size, duration_ms, exit_code, created_ms, last_used_ms`

// scanLegacyEntry reads legacyEntryCols.
func scanLegacyEntry(sc scanner) (Entry, error) {
	var e Entry
	var outputs string
	var listing []byte
	var dur, created, used int64
	if err := sc.Scan(&e.Hash, &e.TaskID, &e.Project, &e.Command, &e.OutputsBlob, &outputs, &listing, &e.LogBlob, &e.Size, &dur,
		&e.ExitCode, &created, &used); err != nil {
		return e, err
	}
	return finishEntry(e, outputs, listing, dur, created, used)
}

// legacyCommandRuns reads the executions that ran their command, oldest first.
func legacyCommandRuns(ctx context.Context, tx *sql.Tx) ([]Execution, error) {
	runs, err := queryAll(ctx, tx, "command runs", func(sc scanner) (Execution, error) {
		var e Execution
		var dur int64
		err := sc.Scan(&e.TaskID, &e.Status, &dur, &e.PeakRSSBytes)
		e.Duration = msDuration(dur)
		return e, err
	}, `SELECT task_id, status, duration_ms, peak_rss FROM executions WHERE status IN `+ranStatuses+` ORDER BY run_id, ord`)
	if err != nil {
		return nil, fmt.Errorf("carry the command runs: %w", err)
	}
	return runs, nil
}

// legacyKeptBlobs reads the failure logs the history refers to.
func legacyKeptBlobs(ctx context.Context, tx *sql.Tx) ([]string, error) {
	kept, err := queryAll(ctx, tx, "failure logs", func(sc scanner) (string, error) {
		var b string
		return b, sc.Scan(&b)
	}, `SELECT DISTINCT log_blob FROM executions WHERE log_source = 'failure' AND log_blob != ''`)
	if err != nil {
		return nil, fmt.Errorf("carry the failure logs: %w", err)
	}
	return kept, nil
}

// writeLegacy writes what importLegacy carries into the shared index in one transaction. The
// command runs are carried once per checkout folder (a meta row says so), entries and kept blobs
// are idempotent.
func (s *Store) writeLegacy(ctx context.Context, entries []Entry, runs []Execution, kept []string) error {
	tx, err := s.sh.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("carry into %s: %w", SharedIndexPath(s.sharedDir), err)
	}
	defer tx.Rollback()
	insert, err := tx.PrepareContext(ctx, insertEntrySQL(`INSERT OR IGNORE`))
	if err != nil {
		return fmt.Errorf("carry the cache entries: %w", err)
	}
	defer insert.Close()
	for _, e := range entries {
		e.Checkout = s.checkout
		if err := insertEntry(ctx, insert, e); err != nil {
			return err
		}
	}
	marker := "imported:" + s.dir
	var done int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM meta WHERE key = ?`, marker).Scan(&done); err != nil {
		return fmt.Errorf("carry the command runs: %w", err)
	}
	if done == 0 {
		if err := insertCommandRuns(ctx, tx, runs, s.checkout); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, '1')`, marker); err != nil {
			return fmt.Errorf("carry the command runs: %w", err)
		}
	}
	if err := insertKeptBlobs(ctx, tx, kept, s.checkout, ms(s.now())); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("carry into %s: %w", SharedIndexPath(s.sharedDir), err)
	}
	return nil
}

// moveLegacyBlobs moves every blob of the checkout folder's own cas/ into the shared store's (a
// blob already there is kept, and the checkout's copy removed), and answers how many it moved.
// A blob is renamed where both folders share a file system, else copied to a temporary file
// beside its place and renamed into it, then removed: a crash leaves it in one place or both.
func (s *Store) moveLegacyBlobs() (int, error) {
	old := NewCAS(filepath.Join(s.dir, "cas"))
	if filepath.Clean(old.Dir()) == filepath.Clean(s.cas.Dir()) {
		return 0, nil
	}
	blobs, err := old.Walk()
	if err != nil {
		return 0, err
	}
	moved := 0
	for _, b := range blobs {
		if b.Temp {
			_ = old.RemoveFile(b)
			continue
		}
		to := s.cas.Path(b.Name)
		if _, err := os.Lstat(to); err != nil {
			if err := moveFile(b.path, to); err != nil {
				return moved, fmt.Errorf("move blob %s into the shared store: %w", short(b.Name), err)
			}
			moved++
		}
		_ = old.RemoveFile(b)
	}
	removeEmptyFolders(old.Dir())
	return moved, nil
}

// moveFile moves a file to a path of another folder, across file systems too.
func moveFile(from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	if err := os.Rename(from, to); err == nil {
		return nil
	}
	f, err := os.Open(from)
	if err != nil {
		return err
	}
	defer f.Close()
	return atomicfile.Write(to, func(w io.Writer) error {
		_, err := io.Copy(w, f)
		return err
	})
}

// removeEmptyFolders removes dir's empty subfolders and dir itself when empty.
func removeEmptyFolders(dir string) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, d := range des {
		if d.IsDir() {
			_ = os.Remove(filepath.Join(dir, d.Name()))
		}
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return
	}
}

// LegacyEntries answers how many cache entries the checkout's index still holds in the layout
// before the shared store (the next writer's open moves them); 0 when it holds none.
func (s *Store) LegacyEntries(ctx context.Context) int {
	if s.db == nil || s.version >= sharedVersion {
		return 0
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM cache_entries`).Scan(&n); err != nil {
		return 0
	}
	return n
}

// adoptSharedFolderIndex carries the cache entries of a checkout index of the layout before the
// shared store that lies in the shared store's folder itself: the state folder VX_CACHE_DIR moved
// before it named the shared store. Its entries (their blobs are already in the folder's cas/),
// command runs and kept failure logs are carried as importLegacy carries a checkout's; its run
// history stays in that index, which the message names.
func (s *Store) adoptSharedFolderIndex(ctx context.Context) error {
	if filepath.Clean(s.sharedDir) == filepath.Clean(s.dir) {
		return nil
	}
	path := IndexPath(s.sharedDir)
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	old := &Store{dir: s.sharedDir, sharedDir: s.sharedDir, sh: s.sh, checkout: s.checkout, cas: s.cas, now: s.now}
	db, err := old.openForWriting(ctx, path, false)
	if err != nil {
		var ve *VersionError
		if errors.As(err, &ve) {
			return nil
		}
		return err
	}
	db.Close()
	if old.Migrated != "" {
		s.Migrated = strings.TrimPrefix(s.Migrated+"; ", "; ") + fmt.Sprintf(
			"moved the cache entries of %s (the state folder VX_CACHE_DIR named before it named the shared store) into the shared store; "+
				"its run history stays there (VX_STATE_DIR=%s reads it)", path, s.sharedDir)
	}
	return nil
}
