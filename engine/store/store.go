// Package store keeps vx's two state folders. The checkout's own (.vx/) holds its index (index.db,
// SQLite in WAL mode) of runs, task executions, key manifests and the file-stat cache. The shared
// store, one per repository that every checkout and worktree of it uses (see engine/statedirs),
// holds the cache entries, the command runs the scheduler estimates from and the failure logs a
// history keeps (entries.db, SQLite in WAL mode, safe for several processes on a local disk), and
// the content-addressed blobs under cas/ (outputs archives and logs). A checkout index of the layout
// before the split carries its entries and blobs into the shared store when a writer first opens it.
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
	dir string
	db  *sql.DB // nil for a read-only store over an absent index
	// sharedDir is the shared store's folder (dir itself where none other is named); sh its open
	// index, nil for a read-only store over an absent one.
	sharedDir string
	sh        *sharedDB
	// checkout names this checkout in the shared store's rows (its workspace root).
	checkout string
	// Migrated says what a first open carried from a checkout index of the layout before the
	// shared store into it, for the caller's one message; "" when nothing was carried.
	Migrated string
	readOnly bool
	// version is the index's layout version (SchemaVersion once a writer has opened it; a reader
	// may read an older one, down to oldestReadable).
	version int
	cas     *CAS
	// Reset is set when Open found an index of another version (or an unreadable one) and reset
	// it; it says what was found, for the caller's message.
	Reset string
	now   func() time.Time

	stmts stmtCache

	// runsMu guards runs: the runs begun here and not finished (see BeginRun).
	runsMu sync.Mutex
	runs   map[string]*openRun
}

// prepared answers a statement prepared once for the store's life.
func (s *Store) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	return s.stmts.prepare(ctx, s.db, query)
}

// Options configure Open.
type Options struct {
	// ResetOtherVersion lets Open reset an index of another schema version (vx run does;
	// vx cache prune refuses it like a reader).
	ResetOtherVersion bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// SharedDir is the shared store's folder; "" means dir itself (the shared index and cas/ beside
	// the checkout's index).
	SharedDir string
	// Checkout names this checkout in the shared store (its workspace root); "" means dir's parent.
	Checkout string
}

// Dir returns the checkout's state folder.
func (s *Store) Dir() string { return s.dir }

// SharedDir returns the shared store's folder.
func (s *Store) SharedDir() string { return s.sharedDir }

// Checkout returns the name of this checkout in the shared store (its workspace root).
func (s *Store) Checkout() string { return s.checkout }

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

// Open opens (creating when needed) the checkout's state folder dir and the shared store for
// writing. A shared store that cannot be written, of another version, or that another user owns or
// others may write is an error naming it and the fix; the checkout's folder is not touched then.
func Open(ctx context.Context, dir string, opts Options) (*Store, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	shared, checkout := sharedOf(dir, opts.SharedDir, opts.Checkout)
	sh, sharedReset, err := openSharedForWriting(ctx, shared, now)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		sh.close()
		return nil, fmt.Errorf("create state folder: %w", err)
	}
	s := &Store{dir: dir, sharedDir: shared, sh: sh, checkout: checkout, cas: &CAS{dir: filepath.Join(shared, "cas")}, now: now}
	if err := s.openCheckout(ctx, opts.ResetOtherVersion); err != nil {
		sh.close()
		return nil, err
	}
	if sharedReset != "" {
		s.Reset = strings.TrimPrefix(s.Reset+"; "+sharedReset, "; ")
	}
	if err := s.adoptSharedFolderIndex(ctx); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.noteShared(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// sharedOf answers the shared folder and the checkout's name Options give for dir.
func sharedOf(dir, shared, checkout string) (string, string) {
	if shared == "" {
		shared = dir
	}
	if checkout == "" {
		checkout = filepath.Dir(filepath.Clean(dir))
	}
	return shared, checkout
}

// openCheckout opens the checkout's index for writing, setting aside one that cannot be read.
func (s *Store) openCheckout(ctx context.Context, resetOther bool) error {
	path := IndexPath(s.dir)
	db, err := s.openForWriting(ctx, path, resetOther)
	if err != nil {
		var ve *VersionError
		if errors.As(err, &ve) || !resetOther || !isCorrupt(err) {
			return err
		}
		// An unreadable index is history lost, not a reason to stop working: set it aside.
		aside := fmt.Sprintf("%s.corrupt-%d", path, s.now().UnixNano())
		for _, suffix := range []string{"", "-wal", "-shm"} {
			_ = os.Rename(path+suffix, aside+suffix)
		}
		if db, err = s.openForWriting(ctx, path, true); err != nil {
			return err
		}
		s.Reset = fmt.Sprintf("an unreadable index (moved to %s)", filepath.Base(aside))
	}
	s.db, s.version = db, SchemaVersion
	return nil
}

// sharedDirKey is the checkout index's meta row naming the shared store its last writer used, so
// that a reader given only the checkout's folder finds it.
const sharedDirKey = "shared_dir"

// noteShared records the shared store's folder in the checkout's index, when it changed.
func (s *Store) noteShared(ctx context.Context) error {
	var cur string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, sharedDirKey).Scan(&cur)
	if err == nil && cur == s.sharedDir {
		return nil
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("read %s: %w", IndexPath(s.dir), err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)`, sharedDirKey, s.sharedDir); err != nil {
		return fmt.Errorf("write %s: %w", IndexPath(s.dir), err)
	}
	return nil
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
	conn, err := sqlite.NewConnector(dsn(path, mode))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// Statements count themselves in the Counters of their context (engine/counters).
	db := sql.OpenDB(countingConnector{conn})
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

// OpenReadOnly opens the checkout's state folder dir for reading, with the shared store its last
// writer used (dir itself when none is recorded). When dir or its index does not exist it answers
// as an empty index and creates nothing; an index of another version is a *VersionError. A folder
// that may not be written is read without writing anything (see openForReading).
func OpenReadOnly(ctx context.Context, dir string) (*Store, error) {
	return OpenReadOnlyShared(ctx, dir, "")
}

// OpenReadOnlyShared is OpenReadOnly with the shared store's folder named ("" for the one the
// checkout's index records). Either index may be absent: it then answers as empty.
func OpenReadOnlyShared(ctx context.Context, dir, shared string) (*Store, error) {
	s := &Store{dir: dir, readOnly: true, now: time.Now}
	if err := s.openCheckoutReading(ctx); err != nil {
		return nil, err
	}
	if shared == "" {
		shared = s.recordedShared(ctx)
	}
	s.sharedDir, s.checkout = sharedOf(dir, shared, "")
	s.cas = &CAS{dir: filepath.Join(s.sharedDir, "cas")}
	sh, err := openSharedForReading(ctx, s.sharedDir)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.sh = sh
	return s, nil
}

// OpenCheckoutReadOnly opens the checkout's state folder dir alone for reading (its history and
// stat cache; no cache entry), as OpenReadOnly opens it: for a reader the shared store's state
// must not stop (the watcher's stat-cache seed).
func OpenCheckoutReadOnly(ctx context.Context, dir string) (*Store, error) {
	s := &Store{dir: dir, sharedDir: dir, checkout: filepath.Dir(filepath.Clean(dir)), readOnly: true, now: time.Now,
		cas: &CAS{dir: filepath.Join(dir, "cas")}}
	if err := s.openCheckoutReading(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// recordedShared answers the shared store the checkout's index records, "" for none.
func (s *Store) recordedShared(ctx context.Context) string {
	if s.db == nil {
		return ""
	}
	var v string
	if err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, sharedDirKey).Scan(&v); err != nil {
		return ""
	}
	return v
}

// openCheckoutReading opens the checkout's index read-only; s.db stays nil when there is none.
func (s *Store) openCheckoutReading(ctx context.Context) error {
	path := IndexPath(s.dir)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	db, err := openForReading(ctx, path)
	if err != nil {
		return err
	}
	version, found, err := readVersion(ctx, db)
	if err != nil {
		db.Close()
		return fmt.Errorf("read %s: %w", path, err)
	}
	switch {
	case version == 0:
		// A file another process is creating right now: nothing recorded yet.
		db.Close()
		return nil
	case version < oldestReadable || version > SchemaVersion:
		db.Close()
		return &VersionError{Path: path, Found: found}
	}
	s.db, s.version = db, version
	return nil
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

// Close closes both indexes.
func (s *Store) Close() error {
	if s == nil {
		return nil
	}
	serr := s.sh.close()
	s.sh = nil
	if s.db == nil {
		return serr
	}
	s.stmts.close()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close %s: %w", IndexPath(s.dir), err)
	}
	return serr
}

// IntegrityCheck runs PRAGMA integrity_check on both indexes and answers the first line of the
// first that is not sound ("ok" when both are).
func (s *Store) IntegrityCheck(ctx context.Context) (string, error) {
	for _, db := range []*sql.DB{s.db, s.sharedHandle()} {
		if db == nil {
			continue
		}
		var res string
		if err := db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil {
			return "", fmt.Errorf("integrity check: %w", err)
		}
		if res != "ok" {
			return res, nil
		}
	}
	return "ok", nil
}

// sharedHandle answers the shared index's handle, nil when it is not open.
func (s *Store) sharedHandle() *sql.DB {
	if s.sh == nil {
		return nil
	}
	return s.sh.db
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

// Inspect answers the state of the checkout's state folder dir (its index alone) without creating
// anything.
func Inspect(ctx context.Context, dir string) State {
	st := State{State: "absent", Path: IndexPath(dir), SchemaVersion: SchemaVersion}
	s := &Store{dir: dir, readOnly: true, now: time.Now}
	err := s.openCheckoutReading(ctx)
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
	if s.db == nil || s.sh == nil || s.readOnly {
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
