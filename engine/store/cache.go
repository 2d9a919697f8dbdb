package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// OutputFile is one file of a cache entry's outputs archive, so that a hit can tell whether the
// outputs on disk already match without opening the archive.
type OutputFile struct {
	// Path is relative to the project folder, with forward slashes.
	Path string `json:"path"`
	Size int64  `json:"size"`
	Mode uint32 `json:"mode"`
	// Hash is the content's SHA-256 (empty for a symlink).
	Hash string `json:"hash,omitempty"`
	// Link is a symlink's target.
	Link string `json:"link,omitempty"`
}

// Entry is one cache entry: the outputs and log of a successful execution, by cache key.
type Entry struct {
	Hash        string
	TaskID      string
	Project     string
	Command     string
	OutputsBlob string
	Outputs     []OutputFile
	LogBlob     string
	// Size is the bytes of both blobs.
	Size     int64
	Duration time.Duration
	ExitCode int
	Created  time.Time
	LastUsed time.Time
}

const entryCols = `hash, task_id, project, command, outputs_blob, outputs, log_blob, size, duration_ms, exit_code, created_ms, last_used_ms`

func scanEntry(sc interface{ Scan(...any) error }) (Entry, error) {
	var e Entry
	var outputs string
	var dur, created, used int64
	if err := sc.Scan(&e.Hash, &e.TaskID, &e.Project, &e.Command, &e.OutputsBlob, &outputs, &e.LogBlob, &e.Size, &dur,
		&e.ExitCode, &created, &used); err != nil {
		return e, err
	}
	_ = json.Unmarshal([]byte(outputs), &e.Outputs)
	e.Duration = time.Duration(dur) * time.Millisecond
	e.Created = time.UnixMilli(created)
	e.LastUsed = time.UnixMilli(used)
	return e, nil
}

// Entry answers the cache entry of a key; ok is false when there is none.
func (s *Store) Entry(ctx context.Context, hash string) (Entry, bool, error) {
	if s.db == nil {
		return Entry{}, false, nil
	}
	stmt, err := s.prepared(ctx, `SELECT `+entryCols+` FROM cache_entries WHERE hash = ?`)
	if err != nil {
		return Entry{}, false, fmt.Errorf("read cache entry %s: %w", short(hash), err)
	}
	e, err := scanEntry(stmt.QueryRowContext(ctx, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return Entry{}, false, nil
	}
	if err != nil {
		return Entry{}, false, fmt.Errorf("read cache entry %s: %w", short(hash), err)
	}
	return e, true, nil
}

// EntryQuery narrows Entries.
type EntryQuery struct {
	Project string
	TaskID  string
	// Limit is the most answered (0: all), newest first.
	Limit int
}

// Entries answers cache entries, most recently created first.
func (s *Store) Entries(ctx context.Context, q EntryQuery) ([]Entry, error) {
	if s.db == nil {
		return nil, nil
	}
	query := `SELECT ` + entryCols + ` FROM cache_entries`
	var where []string
	var args []any
	if q.Project != "" {
		where, args = append(where, `project = ?`), append(args, q.Project)
	}
	if q.TaskID != "" {
		where, args = append(where, `task_id = ?`), append(args, q.TaskID)
	}
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	query += ` ORDER BY created_ms DESC, hash`
	if q.Limit > 0 {
		query += fmt.Sprintf(` LIMIT %d`, q.Limit)
	}
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read cache entries: %w", err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, fmt.Errorf("read cache entries: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// PutEntry records a cache entry. Its blobs must already be stored: the entry is what makes them
// reachable, so it is written last.
func (s *Store) PutEntry(ctx context.Context, e Entry) error {
	if err := s.writable(); err != nil {
		return err
	}
	outputs, _ := json.Marshal(e.Outputs)
	if e.Outputs == nil {
		outputs = []byte("[]")
	}
	_, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO cache_entries (`+entryCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.Hash, e.TaskID, e.Project, e.Command, e.OutputsBlob, string(outputs), e.LogBlob, e.Size, e.Duration.Milliseconds(),
		e.ExitCode, ms(e.Created), ms(e.LastUsed))
	if err != nil {
		return fmt.Errorf("record cache entry of %s: %w", e.TaskID, err)
	}
	return nil
}

// TouchEntry sets an entry's last use.
func (s *Store) TouchEntry(ctx context.Context, hash string, at time.Time) error {
	if err := s.writable(); err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE cache_entries SET last_used_ms = ? WHERE hash = ?`, ms(at), hash); err != nil {
		return fmt.Errorf("touch cache entry %s: %w", short(hash), err)
	}
	return nil
}

// DeleteEntries removes cache entries (not their blobs, nor any run history).
func (s *Store) DeleteEntries(ctx context.Context, hashes []string) error {
	if err := s.writable(); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("delete cache entries: %w", err)
	}
	defer tx.Rollback()
	for _, h := range hashes {
		if _, err := tx.ExecContext(ctx, `DELETE FROM cache_entries WHERE hash = ?`, h); err != nil {
			return fmt.Errorf("delete cache entry %s: %w", short(h), err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("delete cache entries: %w", err)
	}
	return nil
}

// ReferencedBlobs answers every blob the index still needs: each cache entry's outputs and log,
// and each failure log kept with run history.
func (s *Store) ReferencedBlobs(ctx context.Context) (map[string]bool, error) {
	refs := map[string]bool{}
	if s.db == nil {
		return refs, nil
	}
	for _, q := range []string{
		`SELECT outputs_blob FROM cache_entries`,
		`SELECT log_blob FROM cache_entries`,
		`SELECT log_blob FROM executions WHERE log_source = 'failure'`,
	} {
		rows, err := s.db.QueryContext(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("read blob references: %w", err)
		}
		for rows.Next() {
			var h string
			if err := rows.Scan(&h); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read blob references: %w", err)
			}
			if h != "" {
				refs[h] = true
			}
		}
		rows.Close()
	}
	return refs, nil
}

// PutManifest keeps the manifest a cache key was computed from.
func (s *Store) PutManifest(ctx context.Context, hash, taskID string, manifest []byte) error {
	if err := s.writable(); err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, `INSERT OR IGNORE INTO manifests (hash, task_id, manifest) VALUES (?, ?, ?)`,
		hash, taskID, string(manifest)); err != nil {
		return fmt.Errorf("record manifest of %s: %w", taskID, err)
	}
	return nil
}

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

// CacheCounts are the cache statistics the index answers directly.
type CacheCounts struct {
	Entries    int
	TotalBytes int64
	// RunsSince counts the runs since the given time (that executed a task of the project, when
	// narrowed to one); HitsSince the hit executions since then, CacheableSince the executions
	// that could have hit (hits, misses, failures and timeouts).
	RunsSince, HitsSince, CacheableSince int
}

// CountCache answers entry counts and recent run/hit counts, narrowed to a project when given.
func (s *Store) CountCache(ctx context.Context, project string, since time.Time) (CacheCounts, error) {
	var c CacheCounts
	if s.db == nil {
		return c, nil
	}
	var err error
	if c.Entries, c.TotalBytes, err = s.CacheTotals(ctx, project); err != nil {
		return c, err
	}
	sinceMs := ms(since)
	if project == "" {
		// Ranges of the executions_by_status index, counted without reading a row.
		if err := s.db.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM executions WHERE status = 'hit' AND started_ms >= ?),
			(SELECT count(*) FROM executions WHERE status IN ('hit', 'miss', 'failed', 'timedOut') AND started_ms >= ?)`,
			sinceMs, sinceMs).Scan(&c.HitsSince, &c.CacheableSince); err != nil {
			return c, fmt.Errorf("count cache use: %w", err)
		}
		// Every run counts, even one that recorded no task (nothing selected, cancelled at once).
		c.RunsSince, err = s.CountRuns(ctx, since)
		return c, err
	}
	if err := s.db.QueryRowContext(ctx, `SELECT count(DISTINCT run_id), coalesce(sum(status = 'hit'), 0),
		coalesce(sum(status IN ('hit', 'miss', 'failed', 'timedOut')), 0) FROM executions WHERE started_ms >= ? AND project = ?`,
		sinceMs, project).Scan(&c.RunsSince, &c.HitsSince, &c.CacheableSince); err != nil {
		return c, fmt.Errorf("count cache use: %w", err)
	}
	return c, nil
}

// CacheTotals answers how many cache entries there are and the bytes of their blobs, narrowed to a
// project when given.
func (s *Store) CacheTotals(ctx context.Context, project string) (entries int, totalBytes int64, err error) {
	if s.db == nil {
		return 0, 0, nil
	}
	q := `SELECT count(*), coalesce(sum(size), 0) FROM cache_entries`
	var args []any
	if project != "" {
		q += ` WHERE project = ?`
		args = append(args, project)
	}
	if err := s.db.QueryRowContext(ctx, q, args...).Scan(&entries, &totalBytes); err != nil {
		return 0, 0, fmt.Errorf("count cache entries: %w", err)
	}
	return entries, totalBytes, nil
}

// CountRuns answers how many runs started since the given time.
func (s *Store) CountRuns(ctx context.Context, since time.Time) (int, error) {
	if s.db == nil {
		return 0, nil
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE started_ms >= ?`, ms(since)).Scan(&n); err != nil {
		return 0, fmt.Errorf("count runs: %w", err)
	}
	return n, nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// Manifest rows and last-use updates go with a batch of executions.
type ManifestRow struct {
	Hash     string
	TaskID   string
	Manifest []byte
}

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
		stmt, err := tx.PrepareContext(ctx, `INSERT OR IGNORE INTO manifests (hash, task_id, manifest) VALUES (?, ?, ?)`)
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

// FlakyTasks answers the tasks of which one cache key both passed and failed, sorted.
func (s *Store) FlakyTasks(ctx context.Context) ([]string, error) {
	out := []string{}
	if s.db == nil {
		return out, nil
	}
	query := `SELECT DISTINCT task_id FROM key_outcomes WHERE passed AND failed ORDER BY task_id`
	if !hasTable(ctx, s.db, "key_outcomes") {
		query = flakyFromHistory
	}
	rows, err := s.db.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("read flaky tasks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("read flaky tasks: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// flakyFromHistory finds the flaky tasks in an index without key_outcomes (recorded before it
// existed and not yet opened by a writer): failures are few, so find them (through
// executions_by_status), then look each one's key up among the same task's passes.
const flakyFromHistory = `SELECT DISTINCT f.task_id FROM executions f
	WHERE f.rowid IN (SELECT e.rowid FROM executions e WHERE e.status IN ('failed', 'timedOut')) AND f.hash != ''
	AND EXISTS (SELECT 1 FROM executions p WHERE p.task_id = f.task_id AND p.hash = f.hash AND +p.status IN ('hit', 'miss'))
	ORDER BY f.task_id`

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
