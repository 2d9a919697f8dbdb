package store

import (
	"context"
	"database/sql"
	"encoding/binary"
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
	// Checkout is the root of the checkout whose run wrote the entry into the shared store ("" for
	// one carried from a store that did not say).
	Checkout string
}

// entryCols are the columns scanEntry reads from the shared index. listing holds the output listing
// packed (encodeListing); an entry carried from a checkout index older than packed listings keeps
// its listing as JSON in outputs.
const entryCols = `hash, task_id, project, command, outputs_blob, outputs, listing, log_blob, size, duration_ms, exit_code, created_ms, last_used_ms, checkout`

func scanEntry(sc scanner) (Entry, error) {
	var e Entry
	var outputs string
	var listing []byte
	var dur, created, used int64
	if err := sc.Scan(&e.Hash, &e.TaskID, &e.Project, &e.Command, &e.OutputsBlob, &outputs, &listing, &e.LogBlob, &e.Size, &dur,
		&e.ExitCode, &created, &used, &e.Checkout); err != nil {
		return e, err
	}
	return finishEntry(e, outputs, listing, dur, created, used)
}

// finishEntry decodes an entry's listing and times.
func finishEntry(e Entry, outputs string, listing []byte, dur, created, used int64) (Entry, error) {
	if listing != nil {
		e.Outputs = decodeListing(listing)
	} else if err := jsonColumn(outputs, "outputs", "cache entry "+e.Hash, &e.Outputs); err != nil {
		// A listing that does not decode would restore nothing and call it a hit.
		return e, err
	}
	e.Duration = msDuration(dur)
	e.Created = time.UnixMilli(created)
	e.LastUsed = time.UnixMilli(used)
	return e, nil
}

// msDuration is a duration the index keeps in milliseconds.
func msDuration(v int64) time.Duration { return time.Duration(v) * time.Millisecond }

// encodeListing packs an output listing: per file its path, size, mode, hash and link target, as
// varints and length-first texts. It reads faster than the JSON it replaces (figures:
// docs/performance.md, "Answers and records"), and a full hit reads one listing a task.
func encodeListing(files []OutputFile) []byte {
	buf := make([]byte, 0, len(files)*110)
	for _, f := range files {
		buf = appendText(buf, f.Path)
		buf = binary.AppendVarint(buf, f.Size)
		buf = binary.AppendUvarint(buf, uint64(f.Mode))
		buf = appendText(buf, f.Hash)
		buf = appendText(buf, f.Link)
	}
	return buf
}

// decodeListing unpacks encodeListing's bytes. A listing cut short answers what was read before the
// fault, and the hit that reads it fails its checks (the archive holds files it does not list) and
// becomes a miss.
func decodeListing(listing []byte) []OutputFile {
	files := []OutputFile{}
	d := packedReader{buf: listing, str: string(listing), ok: true}
	for d.pos < len(d.buf) && d.ok {
		var f OutputFile
		f.Path = d.text()
		f.Size = d.varint()
		f.Mode = uint32(d.uvarint())
		f.Hash = d.text()
		f.Link = d.text()
		if d.ok {
			files = append(files, f)
		}
	}
	return files
}

// Entry answers the cache entry of a key; ok is false when there is none.
func (s *Store) Entry(ctx context.Context, hash string) (Entry, bool, error) {
	if s.sh == nil {
		return Entry{}, false, nil
	}
	stmt, err := s.sh.prepared(ctx, `SELECT `+entryCols+` FROM cache_entries WHERE hash = ?`)
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

// EntriesOf answers the cache entries of those hashes it finds, by hash: a query a chunk of
// hashes, where Entry is one a hash.
func (s *Store) EntriesOf(ctx context.Context, hashes []string) (map[string]Entry, error) {
	return s.entriesIn(ctx, hashes, `hash IN (?%s)`)
}

// NewestEntriesOf answers the newest cache entry of each task of taskIDs that has one, by hash:
// the entry a task's next run most often hits, read before its key is known in a query a chunk
// of tasks (cache_entries_by_task finds each), where each lookup would read one.
func (s *Store) NewestEntriesOf(ctx context.Context, taskIDs []string) (map[string]Entry, error) {
	return s.entriesIn(ctx, taskIDs, `task_id IN (?%s) AND created_ms =
		(SELECT MAX(n.created_ms) FROM cache_entries n WHERE n.task_id = cache_entries.task_id)`)
}

// entriesIn answers, by hash, the cache entries where holds for values, a chunk of values a query;
// where's %s is where the placeholders after the first go.
func (s *Store) entriesIn(ctx context.Context, values []string, where string) (map[string]Entry, error) {
	out := make(map[string]Entry, len(values))
	if s.sh == nil {
		return out, nil
	}
	const chunk = 500
	for start := 0; start < len(values); start += chunk {
		part := values[start:min(start+chunk, len(values))]
		args := make([]any, len(part))
		for i, v := range part {
			args[i] = v
		}
		q := `SELECT ` + entryCols + ` FROM cache_entries WHERE ` + fmt.Sprintf(where, strings.Repeat(", ?", len(part)-1))
		entries, err := queryAll(ctx, s.sh.db, "cache entries", scanEntry, q, args...)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			out[e.Hash] = e
		}
	}
	return out, nil
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
	if s.sh == nil {
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
	return queryAll(ctx, s.sh.db, "cache entries", scanEntry, query, args...)
}

// PutEntry records a cache entry in the shared store. Its blobs must already be stored: the entry
// is what makes them reachable, so it is written last.
func (s *Store) PutEntry(ctx context.Context, e Entry) error {
	if err := s.writable(); err != nil {
		return err
	}
	// One row a task: prepared once for the index's life rather than parsed at each.
	stmt, err := s.sh.prepared(ctx, insertEntrySQL(`INSERT OR REPLACE`))
	if err != nil {
		return fmt.Errorf("record cache entry of %s: %w", e.TaskID, err)
	}
	return insertEntry(ctx, stmt, e)
}

// insertEntrySQL is the statement that writes an entry's row with verb (INSERT OR REPLACE,
// INSERT OR IGNORE).
func insertEntrySQL(verb string) string {
	return verb + ` INTO cache_entries (` + entryCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
}

// insertEntry writes e's row through stmt, an insertEntrySQL statement.
func insertEntry(ctx context.Context, stmt *sql.Stmt, e Entry) error {
	// A zero-length blob, never NULL: an entry with no outputs reads as packed too.
	listing := append(make([]byte, 0), encodeListing(e.Outputs)...)
	_, err := stmt.ExecContext(ctx, e.Hash, e.TaskID, e.Project, e.Command, e.OutputsBlob, "[]", listing, e.LogBlob, e.Size,
		e.Duration.Milliseconds(), e.ExitCode, ms(e.Created), ms(e.LastUsed), e.Checkout)
	if err != nil {
		return fmt.Errorf("record cache entry of %s: %w", e.TaskID, err)
	}
	return nil
}

// DeleteEntries removes cache entries (not their blobs, nor any run history).
func (s *Store) DeleteEntries(ctx context.Context, hashes []string) error {
	if err := s.writable(); err != nil {
		return err
	}
	tx, err := s.sh.db.BeginTx(ctx, nil)
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

// ReferencedBlobs answers every blob the stores still need: each cache entry's outputs and log, the
// failure logs any checkout's history keeps (kept_blobs), and those of this checkout's history.
func (s *Store) ReferencedBlobs(ctx context.Context) (map[string]bool, error) {
	refs := map[string]bool{}
	var queries []func() (*sql.Rows, error)
	if s.sh != nil {
		for _, q := range []string{`SELECT outputs_blob FROM cache_entries`, `SELECT log_blob FROM cache_entries`, `SELECT blob FROM kept_blobs`} {
			queries = append(queries, func() (*sql.Rows, error) { return s.sh.db.QueryContext(ctx, q) })
		}
	}
	if s.db != nil {
		queries = append(queries, func() (*sql.Rows, error) {
			return s.db.QueryContext(ctx, `SELECT log_blob FROM executions WHERE log_source = 'failure'`)
		})
	}
	for _, query := range queries {
		rows, err := query()
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
