package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"modernc.org/sqlite"

	"github.com/vzn/vx/engine/atomicfile"
	sqlite3 "modernc.org/sqlite/lib"
)

// SharedIndexFile is the shared store's index inside its folder: the cache entries, the command
// runs the scheduler estimates from, and the blobs a checkout's history keeps. Its name differs
// from the checkout's index.db so that both may live in one folder (VX_CACHE_DIR=.vx).
const SharedIndexFile = "entries.db"

// SharedSchemaVersion is the version of the shared index's layout this vx writes.
const SharedSchemaVersion = 1

// SharedIndexPath is the shared index file of a shared store folder.
func SharedIndexPath(dir string) string { return filepath.Join(dir, SharedIndexFile) }

// sharedTables make the shared index. Times are Unix milliseconds.
var sharedTables = []string{
	`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
	// cache_entries: one per cache key whose outputs and log are in cas/; checkout is the root of
	// the checkout that wrote it, so that a hit says when another worktree's run made it.
	`CREATE TABLE IF NOT EXISTS cache_entries (
		hash TEXT PRIMARY KEY,
		task_id TEXT NOT NULL,
		project TEXT NOT NULL,
		command TEXT NOT NULL,
		outputs_blob TEXT NOT NULL DEFAULT '',
		outputs TEXT NOT NULL DEFAULT '[]',
		listing BLOB,
		log_blob TEXT NOT NULL DEFAULT '',
		size INTEGER NOT NULL DEFAULT 0,
		duration_ms INTEGER NOT NULL DEFAULT 0,
		exit_code INTEGER NOT NULL DEFAULT 0,
		created_ms INTEGER NOT NULL,
		last_used_ms INTEGER NOT NULL,
		checkout TEXT NOT NULL DEFAULT ''
	)`,
	`CREATE INDEX IF NOT EXISTS cache_entries_by_task ON cache_entries (task_id, created_ms)`,
	`CREATE INDEX IF NOT EXISTS cache_entries_by_project_size ON cache_entries (project, size)`,
	// command_runs: each execution that ran its task's command, in any checkout, newest last:
	// the durations and peaks the scheduler orders and reserves by describe tasks, not checkouts.
	`CREATE TABLE IF NOT EXISTS command_runs (
		seq INTEGER PRIMARY KEY AUTOINCREMENT,
		task_id TEXT NOT NULL,
		status TEXT NOT NULL,
		duration_ms INTEGER NOT NULL,
		peak_rss INTEGER NOT NULL,
		checkout TEXT NOT NULL DEFAULT ''
	)`,
	`CREATE INDEX IF NOT EXISTS command_runs_by_task ON command_runs (task_id, seq)`,
	// kept_blobs: the failure logs a checkout's run history refers to, which a prune of the
	// shared store keeps although no cache entry names them.
	`CREATE TABLE IF NOT EXISTS kept_blobs (blob TEXT PRIMARY KEY, checkout TEXT NOT NULL, kept_ms INTEGER NOT NULL)`,
}

// sharedDB is an open shared index; its statements are prepared once for its life.
type sharedDB struct {
	dir   string
	db    *sql.DB
	stmts stmtCache
}

// prepared answers a statement of the shared index prepared once.
func (d *sharedDB) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	return d.stmts.prepare(ctx, d.db, query)
}

func (d *sharedDB) close() error {
	if d == nil {
		return nil
	}
	d.stmts.close()
	if err := d.db.Close(); err != nil {
		return fmt.Errorf("close %s: %w", SharedIndexPath(d.dir), err)
	}
	return nil
}

// SharedVersionError is a shared index of a layout this vx does not write: a newer vx's, most
// likely, sharing the store. It is never reset (the other vx is using it): the fix is named.
type SharedVersionError struct {
	Path  string
	Found string
}

// Error names the file, both versions and the fix.
func (e *SharedVersionError) Error() string {
	return fmt.Sprintf("shared store %s has schema version %s, this vx writes version %d (another vx version uses it): "+
		"upgrade this vx, or give it a store of its own with --cache-dir or VX_CACHE_DIR", e.Path, e.Found, SharedSchemaVersion)
}

// openSharedForWriting opens (creating when needed) the shared index of dir for writing. One that
// cannot be read is set aside, as the checkout's index is; its blobs stay.
func openSharedForWriting(ctx context.Context, dir string, now func() time.Time) (*sharedDB, string, error) {
	if err := makeSharedFolder(dir); err != nil {
		return nil, "", sharedFault(dir, "create", err)
	}
	if err := CheckSharedFolder(dir); err != nil {
		return nil, "", err
	}
	if !writableFolder(dir) {
		return nil, "", sharedFault(dir, "write", errors.New("read-only folder"))
	}
	if err := markShared(dir); err != nil {
		return nil, "", sharedFault(dir, "write", err)
	}
	path := SharedIndexPath(dir)
	db, err := openSharedTries(ctx, path)
	reset := ""
	if err != nil && isCorrupt(err) {
		aside := fmt.Sprintf("%s.corrupt-%d", path, now().UnixNano())
		for _, suffix := range []string{"", "-wal", "-shm"} {
			_ = os.Rename(path+suffix, aside+suffix)
		}
		reset = fmt.Sprintf("an unreadable shared index (moved to %s)", filepath.Base(aside))
		db, err = openSharedTries(ctx, path)
	}
	if err != nil {
		var ve *SharedVersionError
		if errors.As(err, &ve) {
			return nil, "", err
		}
		return nil, "", sharedFault(dir, "open", err)
	}
	return &sharedDB{dir: dir, db: db}, reset, nil
}

// openSharedTries opens and sets up the shared index, trying a busy first open again as
// openForWriting does.
func openSharedTries(ctx context.Context, path string) (*sql.DB, error) {
	deadline := time.Now().Add(busyTimeout)
	for {
		db, err := openDB(ctx, path, forWriting)
		if err == nil {
			if err = setUpShared(ctx, db, path); err != nil {
				db.Close()
			}
		}
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			if err != nil {
				return nil, err
			}
			return db, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("open %s: %w", path, ctx.Err())
		case <-time.After(busyRetry):
		}
	}
}

// setUpShared creates the shared index's tables in one write transaction, or checks that it is
// of this vx's layout.
func setUpShared(ctx context.Context, db *sql.DB, path string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer tx.Rollback()
	version, found, err := readVersion(ctx, tx)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	switch {
	case version == SharedSchemaVersion:
		return nil
	case version != 0:
		return &SharedVersionError{Path: path, Found: found}
	}
	for _, stmt := range sharedTables {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("create %s: %w", path, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, SharedSchemaVersion)); err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)`,
		strconv.Itoa(SharedSchemaVersion)); err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return tx.Commit()
}

// openSharedForReading opens the shared index of dir read-only; nil (and no error) when there is
// none. It creates nothing, and reads a store of another user too: only what a run restores from
// it could do harm, and a run opens it for writing (CheckSharedFolder).
func openSharedForReading(ctx context.Context, dir string) (*sharedDB, error) {
	path := SharedIndexPath(dir)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db, err := openForReading(ctx, path)
	if err != nil {
		return nil, err
	}
	version, found, err := readVersion(ctx, db)
	switch {
	case err != nil:
		db.Close()
		return nil, fmt.Errorf("read %s: %w", path, err)
	case version == 0:
		db.Close()
		return nil, nil
	case version != SharedSchemaVersion:
		db.Close()
		return nil, &SharedVersionError{Path: path, Found: found}
	}
	return &sharedDB{dir: dir, db: db}, nil
}

// sharedFault names a shared store that could not be created or opened for writing, with the fix.
func sharedFault(dir, verb string, err error) error {
	fix := "move the store with --cache-dir or VX_CACHE_DIR"
	switch {
	case isFull(err):
		fix = "free space there, or " + fix
	case refusedForWriting(err) || errors.Is(err, os.ErrPermission) || !writableFolder(dir):
		fix = "make it writable, or " + fix
	}
	return fmt.Errorf("shared store %s: cannot %s it (%v): %s", dir, verb, err, fix)
}

// isFull reports whether err is a disk (or a quota, or a file size limit) that is full.
func isFull(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL {
		return true
	}
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EFBIG) || strings.Contains(err.Error(), "disk is full")
}

// sharedMarkers are written into a shared store folder once: a .gitignore that leaves the whole
// folder out of git's view (and so out of every key, should the store lie inside a workspace), and
// the CACHEDIR.TAG backup tools skip.
var sharedMarkers = map[string]string{
	".gitignore":   "# vx's shared store: nothing here belongs in git.\n*\n",
	"CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n# vx's shared store (https://bford.info/cachedir/)\n",
}

// markShared writes the markers dir lacks.
func markShared(dir string) error {
	for name, text := range sharedMarkers {
		path := filepath.Join(dir, name)
		if _, err := os.Lstat(path); err == nil {
			continue
		}
		if err := atomicfile.WriteFile(path, []byte(text)); err != nil {
			return err
		}
	}
	return nil
}
