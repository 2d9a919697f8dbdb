// Package store keeps vx's state folder (.vx/): the index (index.db, SQLite in WAL mode) of runs,
// task executions, cache entries, key manifests and the file-stat cache, and the content-addressed
// blobs under cas/ (outputs archives and logs).
//
// Writers (vx run, vx cache prune) open it with Open; readers (vx last, vx why, the MCP cache tools)
// with OpenReadOnly, which creates nothing on disk and answers as an empty index when there is none.
// An index written by another schema version is refused by name by readers and reset by the next run.
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
	"sync"
	"time"

	"golang.org/x/sys/unix"
	"modernc.org/sqlite" // also the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"
)

// SchemaVersion is the version of the index layout this vx reads and writes. An index of another
// version is refused by readers and reset by the next vx run.
const SchemaVersion = 1

// IndexFile is the index's file name inside the state folder.
const IndexFile = "index.db"

// busyTimeout is how long a statement waits for another process's write lock before failing.
const busyTimeout = 15 * time.Second

// VersionError is an index written by another schema version.
type VersionError struct {
	Path  string
	Found string // the version found, "none" when the file holds no version row
}

// Error names the file and both versions.
func (e *VersionError) Error() string {
	return fmt.Sprintf("%s has index schema version %s, this vx reads version %d: the next `vx run` resets it",
		e.Path, e.Found, SchemaVersion)
}

// Store is an open state folder. Its methods are safe for concurrent use.
type Store struct {
	dir      string
	db       *sql.DB // nil for a read-only store over an absent index
	readOnly bool
	cas      *CAS
	// Reset is set when Open found an index of another version (or an unreadable one) and reset
	// it; it says what was found, for the caller's message.
	Reset string
	now   func() time.Time

	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt
}

// prepared answers a statement prepared once for the store's life.
func (s *Store) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if st, ok := s.stmts[query]; ok {
		return st, nil
	}
	st, err := s.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if s.stmts == nil {
		s.stmts = map[string]*sql.Stmt{}
	}
	s.stmts[query] = st
	return st, nil
}

// Options configure Open.
type Options struct {
	// ResetOtherVersion lets Open reset an index of another schema version (vx run does;
	// vx cache prune refuses it like a reader).
	ResetOtherVersion bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Dir returns the state folder.
func (s *Store) Dir() string { return s.dir }

// CAS returns the blob store.
func (s *Store) CAS() *CAS { return s.cas }

// ReadOnly reports whether the store was opened for reading.
func (s *Store) ReadOnly() bool { return s.readOnly }

// Empty reports whether the store is a read-only view of an absent index.
func (s *Store) Empty() bool { return s.db == nil }

// Now is the store's clock.
func (s *Store) Now() time.Time { return s.now() }

// IndexPath is the index file of a state folder.
func IndexPath(dir string) string { return filepath.Join(dir, IndexFile) }

// openMode is how a connection opens the index.
type openMode int

const (
	// forWriting opens it read-write, in WAL mode.
	forWriting openMode = iota
	// forReading opens it read-only, sharing the WAL with a writer at work: SQLite needs to
	// create the -shm (and -wal) file beside the index for that, so the folder must be writable.
	forReading
	// asImmutable opens it read-only as a file nothing changes: no lock, no -shm, no -wal, not a
	// byte written. Sound only where no writer can be at work, such as a folder no one may write.
	asImmutable
)

func dsn(path string, mode openMode) string {
	q := fmt.Sprintf("_busy_timeout=%d", busyTimeout.Milliseconds())
	switch mode {
	case forWriting:
		q += "&_journal_mode=WAL&_synchronous=NORMAL&_txlock=immediate"
	case forReading:
		q += "&mode=ro"
	case asImmutable:
		q += "&mode=ro&immutable=1"
	}
	return "file:" + path + "?" + q
}

// Open opens (creating when needed) the state folder dir for writing.
func Open(ctx context.Context, dir string, opts Options) (*Store, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create state folder: %w", err)
	}
	s := &Store{dir: dir, cas: &CAS{dir: filepath.Join(dir, "cas")}, now: now}
	path := IndexPath(dir)
	db, err := openDB(ctx, path, forWriting)
	if err == nil {
		err = s.setUp(ctx, db, opts.ResetOtherVersion)
		if err != nil {
			db.Close()
		}
	}
	if err != nil {
		var ve *VersionError
		if errors.As(err, &ve) || !opts.ResetOtherVersion || !isCorrupt(err) {
			return nil, err
		}
		// An unreadable index is history lost, not a reason to stop working: set it aside.
		aside := fmt.Sprintf("%s.corrupt-%d", path, now().UnixNano())
		for _, suffix := range []string{"", "-wal", "-shm"} {
			_ = os.Rename(path+suffix, aside+suffix)
		}
		if db, err = openDB(ctx, path, forWriting); err != nil {
			return nil, err
		}
		if err = s.setUp(ctx, db, true); err != nil {
			db.Close()
			return nil, err
		}
		s.Reset = fmt.Sprintf("an unreadable index (moved to %s)", filepath.Base(aside))
	}
	s.db = db
	return s, nil
}

func openDB(ctx context.Context, path string, mode openMode) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn(path, mode))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// Several connections: in WAL mode readers (cache lookups of parallel workers) never wait for
	// each other nor for the writer; writes take the lock at BEGIN (_txlock=immediate) and wait
	// for each other through the busy timeout.
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(4)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

func isCorrupt(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "not a database") || strings.Contains(msg, "malformed") ||
		strings.Contains(msg, "SQLITE_CORRUPT") || strings.Contains(msg, "SQLITE_NOTADB")
}

// setUp creates the schema, or checks its version, inside one write transaction so that two
// processes opening a fresh folder at once agree.
func (s *Store) setUp(ctx context.Context, db *sql.DB, reset bool) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("open %s: %w", IndexPath(s.dir), err)
	}
	defer tx.Rollback()
	found, err := readVersion(ctx, tx)
	if err != nil {
		return fmt.Errorf("read %s: %w", IndexPath(s.dir), err)
	}
	switch {
	case found == strconv.Itoa(SchemaVersion):
		if err := ensureReadIndexes(ctx, tx); err != nil {
			return fmt.Errorf("index %s: %w", IndexPath(s.dir), err)
		}
		if err := ensureKeyOutcomes(ctx, tx); err != nil {
			return fmt.Errorf("index %s: %w", IndexPath(s.dir), err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("index %s: %w", IndexPath(s.dir), err)
		}
		return nil
	case found == "" && !hasTables(ctx, tx):
		// A new index.
	case !reset:
		if found == "" {
			found = "none"
		}
		return &VersionError{Path: IndexPath(s.dir), Found: found}
	default:
		if found == "" {
			found = "none"
		}
		if err := dropAll(ctx, tx); err != nil {
			return fmt.Errorf("reset %s: %w", IndexPath(s.dir), err)
		}
		s.Reset = "schema version " + found
	}
	for _, stmt := range schema {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("create %s: %w", IndexPath(s.dir), err)
		}
	}
	if err := ensureReadIndexes(ctx, tx); err != nil {
		return fmt.Errorf("create %s: %w", IndexPath(s.dir), err)
	}
	if err := ensureKeyOutcomes(ctx, tx); err != nil {
		return fmt.Errorf("create %s: %w", IndexPath(s.dir), err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES ('schema', ?)`,
		strconv.Itoa(SchemaVersion)); err != nil {
		return fmt.Errorf("create %s: %w", IndexPath(s.dir), err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create %s: %w", IndexPath(s.dir), err)
	}
	return nil
}

// ensureReadIndexes creates the readIndexes an index lacks and drops the droppedIndexes it still
// has. Where all are as they should be it only reads the schema: a writer opens the index on every
// vx run. Creating them on a long history takes a moment once (about a second for 160,000
// executions), inside the opening transaction, so a crash leaves the index as it was.
func ensureReadIndexes(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'index'`)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		have[name] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, ix := range readIndexes {
		if !have[ix.name] {
			if _, err := tx.ExecContext(ctx, `CREATE INDEX IF NOT EXISTS `+ix.name+` ON `+ix.columns); err != nil {
				return fmt.Errorf("create index %s: %w", ix.name, err)
			}
		}
	}
	for _, name := range droppedIndexes {
		if have[name] {
			if _, err := tx.ExecContext(ctx, `DROP INDEX IF EXISTS `+name); err != nil {
				return fmt.Errorf("drop index %s: %w", name, err)
			}
		}
	}
	return nil
}

// key_outcomes keeps, per task and cache key, whether an execution of it ever passed and ever
// failed, so that the flaky tasks (one key both passed and failed) are read from a few thousand
// rows rather than by looking every failure's key up among the whole history. A trigger keeps it
// current on every recorded execution, whichever vx writes; a writer that finds it missing (an
// index recorded before it existed) creates it and fills it from the history, once, inside its
// opening transaction. A reader never creates it and, where it is missing, asks the history.
const (
	keyOutcomesTable = `CREATE TABLE IF NOT EXISTS key_outcomes (
		task_id TEXT NOT NULL,
		hash TEXT NOT NULL,
		passed INTEGER NOT NULL DEFAULT 0,
		failed INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY (task_id, hash)
	)`
	keyOutcomesTrigger = `CREATE TRIGGER IF NOT EXISTS key_outcomes_record AFTER INSERT ON executions
		WHEN NEW.hash != '' AND NEW.status IN ('hit', 'miss', 'failed', 'timedOut')
		BEGIN
			INSERT INTO key_outcomes (task_id, hash, passed, failed)
			VALUES (NEW.task_id, NEW.hash, NEW.status IN ('hit', 'miss'), NEW.status IN ('failed', 'timedOut'))
			ON CONFLICT (task_id, hash) DO UPDATE SET passed = max(passed, excluded.passed), failed = max(failed, excluded.failed);
		END`
	keyOutcomesFill = `INSERT OR REPLACE INTO key_outcomes (task_id, hash, passed, failed)
		SELECT task_id, hash, max(status IN ('hit', 'miss')), max(status IN ('failed', 'timedOut'))
		FROM executions WHERE hash != '' AND status IN ('hit', 'miss', 'failed', 'timedOut') GROUP BY task_id, hash`
)

// ensureKeyOutcomes creates key_outcomes, fills it from the history and installs its trigger
// where the index lacks them.
func ensureKeyOutcomes(ctx context.Context, tx *sql.Tx) error {
	if hasTable(ctx, tx, "key_outcomes") {
		return nil
	}
	for _, stmt := range []string{keyOutcomesTable, keyOutcomesFill, keyOutcomesTrigger} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("key outcomes: %w", err)
		}
	}
	return nil
}

// hasTable reports whether the index has the named table.
func hasTable(ctx context.Context, q querier, name string) bool {
	var n int
	_ = q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, name).Scan(&n)
	return n > 0
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// readVersion answers the schema row, "" when there is no meta table or no row.
func readVersion(ctx context.Context, q querier) (string, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type='table' AND name='meta'`).Scan(&n); err != nil {
		return "", err
	}
	if n == 0 {
		return "", nil
	}
	var v string
	err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='schema'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

func hasTables(ctx context.Context, q querier) bool {
	var n int
	_ = q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type='table'`).Scan(&n)
	return n > 0
}

func dropAll(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		names = append(names, n)
	}
	rows.Close()
	for _, n := range names {
		if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS "`+strings.ReplaceAll(n, `"`, `""`)+`"`); err != nil {
			return err
		}
	}
	return nil
}

// OpenReadOnly opens the state folder dir for reading. When dir or its index does not exist it
// answers as an empty index and creates nothing; an index of another version is a *VersionError.
// A folder that may not be written is read without writing anything (see openForReading).
func OpenReadOnly(ctx context.Context, dir string) (*Store, error) {
	s := &Store{dir: dir, readOnly: true, cas: &CAS{dir: filepath.Join(dir, "cas")}, now: time.Now}
	path := IndexPath(dir)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return s, nil
	} else if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db, err := openForReading(ctx, path)
	if err != nil {
		return nil, err
	}
	found, err := readVersion(ctx, db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if found != strconv.Itoa(SchemaVersion) {
		tables := hasTables(ctx, db)
		db.Close()
		if found == "" {
			if !tables {
				// A file another process is creating right now: nothing recorded yet.
				return s, nil
			}
			found = "none"
		}
		return nil, &VersionError{Path: path, Found: found}
	}
	s.db = db
	return s, nil
}

// openForReading opens the index read-only. Where the folder is writable it shares the WAL with
// any writer at work, as SQLite's readers do. Where it is not — another user's checkout, a CI
// cache restored read-only (chmod -R a-w, which root too is held to here, though no permission
// stops root) — SQLite cannot create the -shm file a WAL reader needs, and no writer can be at
// work there: the index is opened immutable, and nothing is written. The same happens when the
// shared open is refused for want of write permission (a -shm file of another user's).
//
// One case keeps the shared open in a read-only folder: a -wal that still holds commits (its
// writer died before checkpointing them), which an immutable open would not see; a reader that
// may write nothing there falls back to immutable and misses them until the next vx run.
func openForReading(ctx context.Context, path string) (*sql.DB, error) {
	if writableFolder(filepath.Dir(path)) || walHoldsCommits(path) {
		db, err := openDB(ctx, path, forReading)
		if err == nil || !refusedForWriting(err) {
			return db, err
		}
	}
	return openDB(ctx, path, asImmutable)
}

// writableFolder reports whether this process may create files in dir, and whether dir means to
// let anyone: root passes every permission check, but a folder without a write bit is read-only
// by intent.
func writableFolder(dir string) bool {
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm()&0o222 == 0 {
		return false
	}
	return unix.Access(dir, unix.W_OK) == nil
}

// walHoldsCommits reports whether the index's -wal file holds frames not yet in the index file.
func walHoldsCommits(path string) bool {
	fi, err := os.Stat(path + "-wal")
	return err == nil && fi.Size() > 0
}

// refusedForWriting reports whether SQLite refused to open the index because it could not write
// beside it: read-only (SQLITE_READONLY and its extended codes), cannot open, or not permitted.
func refusedForWriting(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM:
		return true
	}
	return false
}

// Close closes the index.
func (s *Store) Close() error {
	if s == nil || s.db == nil {
		return nil
	}
	s.stmtMu.Lock()
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmts = nil
	s.stmtMu.Unlock()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close %s: %w", IndexPath(s.dir), err)
	}
	return nil
}

// IntegrityCheck runs PRAGMA integrity_check and answers its first line ("ok" when sound).
func (s *Store) IntegrityCheck(ctx context.Context) (string, error) {
	if s.db == nil {
		return "ok", nil
	}
	var res string
	if err := s.db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil {
		return "", fmt.Errorf("integrity check: %w", err)
	}
	return res, nil
}

// State describes a state folder without changing it, for vx info.
type State struct {
	// State is "absent" (no index), "ok", "otherVersion" or "unreadable".
	State string `json:"state"`
	// Path is the index file.
	Path string `json:"path"`
	// SchemaVersion is the version this vx reads; FoundVersion the one on disk ("" when absent).
	SchemaVersion int    `json:"schemaVersion"`
	FoundVersion  string `json:"foundVersion,omitempty"`
	// Error says what made the index unreadable.
	Error string `json:"error,omitempty"`
}

// Inspect answers the state of the state folder dir without creating anything.
func Inspect(ctx context.Context, dir string) State {
	st := State{State: "absent", Path: IndexPath(dir), SchemaVersion: SchemaVersion}
	s, err := OpenReadOnly(ctx, dir)
	var ve *VersionError
	switch {
	case errors.As(err, &ve):
		st.State, st.FoundVersion = "otherVersion", ve.Found
	case err != nil:
		st.State, st.Error = "unreadable", err.Error()
	case s.db == nil:
	default:
		st.State, st.FoundVersion = "ok", strconv.Itoa(SchemaVersion)
		s.Close()
	}
	return st
}

// ms is how the index keeps a time: Unix milliseconds.
func ms(t time.Time) int64 { return t.UnixMilli() }

// short is a hash cut to its first 12 digits, for messages.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// writable refuses a write to a store opened for reading.
func (s *Store) writable() error {
	if s.db == nil || s.readOnly {
		return errors.New("the index is open read-only")
	}
	return nil
}

// nonNil answers an empty list for nil, so that it is kept as [] rather than null.
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
