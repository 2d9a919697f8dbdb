package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"sort"
	"sync"
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

// The stat cache is kept a row per folder (stat_folders, migration 5): the folder's root-relative
// path ("." for the root) and its files' stats packed in one blob (encodeStats). A run loads every
// row in one query and unpacks a folder's blob only when a file in it is asked about, so that a run
// of a few projects in a workspace of 40,000 files pays for the folders it reads, and a full run
// reads thousands of rows, not tens of thousands.

// StatCache is the stat cache as the index held it when loaded: root-relative path → stat. It is
// safe for concurrent use.
type StatCache struct {
	mu      sync.Mutex
	packed  map[string][]byte              // folder → its blob, until first asked about
	folders map[string]map[string]FileStat // folder → file name → stat, once unpacked
}

// NewStatCache answers a stat cache holding stats (root-relative path → stat); nil holds none.
func NewStatCache(stats map[string]FileStat) *StatCache {
	return &StatCache{packed: map[string][]byte{}, folders: byFolder(stats)}
}

// byFolder groups stats (root-relative path → stat) by folder key, then file name.
func byFolder(stats map[string]FileStat) map[string]map[string]FileStat {
	out := map[string]map[string]FileStat{}
	for rel, f := range stats {
		dir, name := splitRel(rel)
		if out[dir] == nil {
			out[dir] = map[string]FileStat{}
		}
		out[dir][name] = f
	}
	return out
}

// folderKey is the stat_folders key of path.Split's folder part: "." for the root.
func folderKey(dir string) string {
	if dir == "" {
		return "."
	}
	return dir[:len(dir)-1]
}

// splitRel splits a root-relative file path into its folder key and name.
func splitRel(rel string) (dir, name string) {
	dir, name = path.Split(rel)
	return folderKey(dir), name
}

// Get answers the stat recorded for a root-relative file path.
func (c *StatCache) Get(rel string) (FileStat, bool) {
	if c == nil {
		return FileStat{}, false
	}
	dir, name := splitRel(rel)
	c.mu.Lock()
	files, ok := c.folders[dir]
	blob, packed := c.packed[dir]
	c.mu.Unlock()
	if !ok && packed {
		// Unpacked outside the lock: workers hashing other folders never wait on it. Two that
		// ask about one folder at once both unpack it, and either result is the same.
		files = decodeStats(blob)
		c.mu.Lock()
		c.folders[dir] = files
		delete(c.packed, dir)
		c.mu.Unlock()
	}
	f, ok := files[name]
	return f, ok
}

// All answers every stat in the cache, by root-relative path.
func (c *StatCache) All() map[string]FileStat {
	out := map[string]FileStat{}
	if c == nil {
		return out
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	put := func(dir string, files map[string]FileStat) {
		for name, f := range files {
			if dir == "." {
				out[name] = f
			} else {
				out[dir+"/"+name] = f
			}
		}
	}
	for dir, files := range c.folders {
		put(dir, files)
	}
	for dir, blob := range c.packed {
		put(dir, decodeStats(blob))
	}
	return out
}

// FileStats loads the stat cache. An index older than the folder layout (a reader's, before the
// next run upgrades it) answers an empty one.
func (s *Store) FileStats(ctx context.Context) (*StatCache, error) {
	c := NewStatCache(nil)
	if s.db == nil || s.version < packedVersion {
		return c, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT folder, rows FROM stat_folders`)
	if err != nil {
		return nil, fmt.Errorf("read stat cache: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var dir string
		var blob []byte
		if err := rows.Scan(&dir, &blob); err != nil {
			return nil, fmt.Errorf("read stat cache: %w", err)
		}
		c.packed[dir] = blob
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read stat cache: %w", err)
	}
	return c, nil
}

// PutFileStats stores stat cache rows (root-relative path → stat) in one transaction, rewriting
// each folder they fall in.
func (s *Store) PutFileStats(ctx context.Context, stats map[string]FileStat) error {
	folders := byFolder(stats)
	edits := make(map[string]func(map[string]FileStat) map[string]FileStat, len(folders))
	for dir, changed := range folders {
		edits[dir] = func(files map[string]FileStat) map[string]FileStat {
			if len(files) == 0 {
				return changed // a folder new to the cache: nothing to merge
			}
			for name, f := range changed {
				files[name] = f
			}
			return files
		}
	}
	return s.editStatFolders(ctx, "write stat cache", edits)
}

// DeleteFileStats removes stat-cache rows by path.
func (s *Store) DeleteFileStats(ctx context.Context, paths []string) error {
	byDir := map[string][]string{}
	for _, rel := range paths {
		dir, name := splitRel(rel)
		byDir[dir] = append(byDir[dir], name)
	}
	edits := make(map[string]func(map[string]FileStat) map[string]FileStat, len(byDir))
	for dir, names := range byDir {
		edits[dir] = func(files map[string]FileStat) map[string]FileStat {
			for _, name := range names {
				delete(files, name)
			}
			return files
		}
	}
	return s.editStatFolders(ctx, "trim stat cache", edits)
}

// editStatFolders rewrites, in one transaction, each folder of edits: its stats as stored, changed
// by its edit (which answers them, changed in place or anew), are written back (the row removed
// when none is left).
func (s *Store) editStatFolders(ctx context.Context, what string, edits map[string]func(files map[string]FileStat) map[string]FileStat) error {
	if len(edits) == 0 {
		return nil
	}
	if err := s.writable(); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer tx.Rollback()
	dirs := make([]string, 0, len(edits))
	for dir := range edits {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	// Each statement is parsed once for the transaction, not once a folder: a fresh clone's first
	// run writes a row for every folder holding an input.
	read, err := tx.PrepareContext(ctx, `SELECT rows FROM stat_folders WHERE folder = ?`)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer read.Close()
	write, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO stat_folders (folder, rows) VALUES (?, ?)`)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer write.Close()
	for _, dir := range dirs {
		var blob []byte
		err := read.QueryRowContext(ctx, dir).Scan(&blob)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%s: %w", what, err)
		}
		files := edits[dir](decodeStats(blob))
		if len(files) == 0 {
			_, err = tx.ExecContext(ctx, `DELETE FROM stat_folders WHERE folder = ?`, dir)
		} else {
			_, err = write.ExecContext(ctx, dir, encodeStats(files))
		}
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// encodeStats packs a folder's stats, by file name in order: per file its name (length first), size,
// mtime, ctime, inode, hash (length first) and recording time, as varints.
func encodeStats(files map[string]FileStat) []byte {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	buf := make([]byte, 0, len(files)*112)
	for _, name := range names {
		f := files[name]
		buf = appendText(buf, name)
		buf = binary.AppendVarint(buf, f.Size)
		buf = binary.AppendVarint(buf, f.MtimeNs)
		buf = binary.AppendVarint(buf, f.CtimeNs)
		buf = binary.AppendUvarint(buf, f.Ino)
		buf = appendText(buf, f.Hash)
		buf = binary.AppendVarint(buf, f.RecordedNs)
	}
	return buf
}

// decodeStats unpacks encodeStats's blob. A blob cut short or otherwise unreadable answers the files
// read before the fault: the stat cache only saves hashing, and a file it lacks is hashed again.
// The names and hashes are cut from one copy of the blob: a folder costs one string, not two a file.
func decodeStats(blob []byte) map[string]FileStat {
	files := map[string]FileStat{}
	d := packedReader{buf: blob, str: string(blob), ok: true}
	for d.pos < len(d.buf) && d.ok {
		name := d.text()
		var f FileStat
		f.Size, f.MtimeNs, f.CtimeNs = d.varint(), d.varint(), d.varint()
		f.Ino = d.uvarint()
		f.Hash = d.text()
		f.RecordedNs = d.varint()
		if d.ok && name != "" {
			files[name] = f
		}
	}
	return files
}
