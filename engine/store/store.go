// Package store keeps vx's state folder (.vx/): the index (index.db, SQLite in WAL mode) of runs,
// task executions, cache entries, key manifests and the file-stat cache, and the content-addressed
// blobs under cas/ (outputs archives and logs).
//
// Writers (vx run, vx cache prune) open it with Open; readers (vx last, vx why, the MCP cache tools)
// with OpenReadOnly, which creates nothing on disk and answers as an empty index when there is none.
// An index written by another schema version is refused by name by readers; the next run upgrades
// an older one (see migrations) and resets any other.
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

	"modernc.org/sqlite" // also the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"
)

// IndexFile is the index's file name inside the state folder.
const IndexFile = "index.db"

// busyTimeout is how long a statement waits for another process's write lock before failing.
const busyTimeout = 15 * time.Second

// Store is an open state folder. Its methods are safe for concurrent use.
type Store struct {
	dir      string
	db       *sql.DB // nil for a read-only store over an absent index
	readOnly bool
	// version is the index's layout version (SchemaVersion once a writer has opened it; a reader
	// may read an older one, down to oldestReadable).
	version int
	cas     *CAS
	// Reset is set when Open found an index of another version (or an unreadable one) and reset
	// it; it says what was found, for the caller's message.
	Reset string
	now   func() time.Time

	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt

	// runsMu guards runs: the runs begun here and not finished (see BeginRun).
	runsMu sync.Mutex
	runs   map[string]*openRun
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
		// temp_store: a statement that needs a journal (the trigger layouts before 8 fired on every
		// recorded execution) keeps it by default in a temporary file; a writer's own queries are
		// small, so its temporary storage stays in memory.
		// wal_autocheckpoint: at SQLite's default of 1,000 pages nearly every all-hit run ends
		// copying the WAL into the index and syncing both; at 8,000 (32 MiB) a run does so only
		// every few runs (figures: docs/performance.md, "Answers and records").
		// journal_size_limit keeps the WAL file to 64 MiB once a checkpoint has emptied it.
		q += "&_journal_mode=WAL&_synchronous=NORMAL&_txlock=immediate&_pragma=temp_store(memory)" +
			"&_pragma=wal_autocheckpoint(8000)&_pragma=journal_size_limit(67108864)"
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
	db, err := s.openForWriting(ctx, path, opts.ResetOtherVersion)
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
		if db, err = s.openForWriting(ctx, path, true); err != nil {
			return nil, err
		}
		s.Reset = fmt.Sprintf("an unreadable index (moved to %s)", filepath.Base(aside))
	}
	s.db, s.version = db, SchemaVersion
	return s, nil
}

// busyRetry is how long Open waits before it tries a busy first open again.
const busyRetry = 20 * time.Millisecond

// openForWriting opens the index for writing and sets it up (setUp). Processes that open a new
// index at once race to turn it to WAL and to create its tables, and SQLite answers SQLITE_BUSY at
// once, without the busy timeout, to the one whose wait could deadlock the other: such an answer
// is tried again, for as long as the busy timeout would have waited.
func (s *Store) openForWriting(ctx context.Context, path string, reset bool) (*sql.DB, error) {
	deadline := time.Now().Add(busyTimeout)
	for {
		db, err := openDB(ctx, path, forWriting)
		if err == nil {
			if err = s.setUp(ctx, db, reset); err != nil {
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

// isBusy reports whether SQLite answered SQLITE_BUSY (any extended code).
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
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
	version, found, err := readVersion(ctx, db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	switch {
	case version == 0:
		// A file another process is creating right now: nothing recorded yet.
		db.Close()
		return s, nil
	case version < oldestReadable || version > SchemaVersion:
		db.Close()
		return nil, &VersionError{Path: path, Found: found}
	}
	s.db, s.version = db, version
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
