package git

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// IndexEntry is what git's index records of one path at stage 0: its mode, its object id, and the
// stat data git compares with the file to tell whether it is clean.
type IndexEntry struct {
	// Mode is git's mode: 0o100644 or 0o100755 for a file, 0o120000 for a symlink, 0o160000 for
	// a submodule.
	Mode uint32
	// ID is the object id, hex.
	ID string
	// CtimeNs and MtimeNs are the stamps recorded when the entry was last refreshed.
	CtimeNs, MtimeNs int64
	// Ino is the inode number modulo 2^32, as the index keeps it.
	Ino uint64
	// Size is the file size modulo 2^32, as the index keeps it.
	Size uint32
	// Flags are git's in-memory entry flags (intent-to-add, skip-worktree and others).
	Flags uint32
}

// Entry flags that make an entry's stat data no promise about the work tree file.
const (
	flagIntentToAdd  = 1 << 29
	flagSkipWorktree = 1 << 30
)

// Index is git's index as one read of its file found it: the stage-0 entries of the
// folder asked about, by path relative to it (forward slashes), and the index file's own mtime,
// against which an entry is racily clean.
type Index struct {
	Entries map[string]IndexEntry
	// Format is the repository's object format: "sha1" or "sha256".
	Format string
	// MtimeNs is the index file's mtime when it was read.
	MtimeNs int64
}

// ReadIndex reads the index of the repository holding dir: the paths under dir, relative to it.
// It asks git where the index file is, the object format and dir's place in the work tree
// (rev-parse), then reads the file itself (indexfile.go) or, where it cannot, has git list it
// (ls-files); it stats the index file before and after, so the entries and the mtime they are
// judged against are of one index file; an index rewritten meanwhile is read again, once.
func ReadIndex(ctx context.Context, dir string) (*Index, error) {
	out, err := Run(ctx, dir, "rev-parse", "--git-path", "index", "--show-object-format", "--show-prefix")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 2 {
		lines = append(lines, "") // the top of the work tree: no prefix
	}
	if len(lines) != 3 {
		return nil, fmt.Errorf("git rev-parse: unexpected answer %q", out)
	}
	indexFile, format, prefix := lines[0], strings.TrimSpace(lines[1]), lines[2]
	if !filepath.IsAbs(indexFile) {
		indexFile = filepath.Join(dir, indexFile)
	}
	if format != "sha1" && format != "sha256" {
		return nil, fmt.Errorf("git object format %q is neither sha1 nor sha256", format)
	}
	for attempt := 0; ; attempt++ {
		before, beforeErr := os.Stat(indexFile)
		data, readErr := os.ReadFile(indexFile)
		var entries map[string]IndexEntry
		read := false
		if readErr == nil {
			entries, read = parseIndexFile(data, format, prefix)
		}
		if !read {
			listing, err := Run(ctx, dir, "-c", "core.quotepath=off", "ls-files", "-s", "--debug", "-z")
			if err != nil {
				return nil, err
			}
			if entries, err = parseIndexListing(listing); err != nil {
				return nil, err
			}
		}
		after, afterErr := os.Stat(indexFile)
		if beforeErr != nil || afterErr != nil {
			// No index file (a repository without a commit or an add): no entry is clean.
			return &Index{Entries: map[string]IndexEntry{}, Format: format}, nil
		}
		if before.ModTime().Equal(after.ModTime()) && before.Size() == after.Size() && os.SameFile(before, after) {
			return &Index{Entries: entries, Format: format, MtimeNs: after.ModTime().UnixNano()}, nil
		}
		if attempt == 1 {
			return nil, fmt.Errorf("read git index %s: it changed while read", indexFile)
		}
	}
}

// parseIndexListing parses `git ls-files -s --debug -z`: each entry is "MODE ID STAGE\tPATH\0"
// followed by the lines "  ctime: S:NS", "  mtime: S:NS", "  dev: D\tino: I", "  uid: U\tgid: G",
// "  size: S\tflags: F". Entries at a stage other than 0 (unmerged) are left out.
func parseIndexListing(out string) (map[string]IndexEntry, error) {
	entries := map[string]IndexEntry{}
	r := bufio.NewReader(strings.NewReader(out))
	for {
		head, err := r.ReadString(0)
		if head == "" && err != nil {
			return entries, nil
		}
		if err != nil {
			return nil, fmt.Errorf("git ls-files: truncated entry %q", head)
		}
		e, stage, path, err := parseIndexHead(strings.TrimSuffix(head, "\x00"))
		if err != nil {
			return nil, err
		}
		for range 5 {
			line, err := r.ReadString('\n')
			if err != nil {
				return nil, fmt.Errorf("git ls-files: truncated stat data of %s", path)
			}
			if err := parseIndexStat(&e, strings.TrimSpace(line)); err != nil {
				return nil, fmt.Errorf("git ls-files: stat data of %s: %w", path, err)
			}
		}
		if stage == 0 {
			entries[path] = e
		}
	}
}

// parseIndexHead parses "MODE ID STAGE\tPATH".
func parseIndexHead(head string) (e IndexEntry, stage int, path string, err error) {
	meta, path, ok := strings.Cut(head, "\t")
	fields := strings.Fields(meta)
	if !ok || len(fields) != 3 {
		return e, 0, "", fmt.Errorf("git ls-files: unexpected entry %q", head)
	}
	mode, err := strconv.ParseUint(fields[0], 8, 32)
	if err != nil {
		return e, 0, "", fmt.Errorf("git ls-files: mode of %s: %w", path, err)
	}
	if stage, err = strconv.Atoi(fields[2]); err != nil {
		return e, 0, "", fmt.Errorf("git ls-files: stage of %s: %w", path, err)
	}
	return IndexEntry{Mode: uint32(mode), ID: fields[1]}, stage, path, nil
}

// parseIndexStat parses one stat line of `ls-files --debug` into e.
func parseIndexStat(e *IndexEntry, line string) error {
	for _, field := range strings.Split(line, "\t") {
		name, value, ok := strings.Cut(field, ": ")
		if !ok {
			return fmt.Errorf("unexpected field %q", field)
		}
		var err error
		switch name {
		case "ctime":
			e.CtimeNs, err = parseStamp(value)
		case "mtime":
			e.MtimeNs, err = parseStamp(value)
		case "ino":
			e.Ino, err = strconv.ParseUint(value, 10, 64)
		case "size":
			var n uint64
			n, err = strconv.ParseUint(value, 10, 32)
			e.Size = uint32(n)
		case "flags":
			var n uint64
			n, err = strconv.ParseUint(value, 16, 32)
			e.Flags = uint32(n)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// parseStamp parses "S:NS" into nanoseconds.
func parseStamp(s string) (int64, error) {
	sec, nsec, ok := strings.Cut(s, ":")
	if !ok {
		return 0, fmt.Errorf("stamp %q", s)
	}
	a, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return 0, err
	}
	b, err := strconv.ParseInt(nsec, 10, 64)
	if err != nil {
		return 0, err
	}
	return a*1e9 + b, nil
}

// FileStat is the stat of a work tree file that CleanID compares with an index entry.
type FileStat struct {
	// Symlink and Regular say what kind of file it is (neither: a folder or another kind).
	Symlink, Regular bool
	Size             int64
	MtimeNs, CtimeNs int64
	Ino              uint64
}

// CleanID answers the object id the index records for path when the file, as st says it stats
// now, is clean by git's own rule: the entry is at stage 0, is neither intent-to-add nor
// skip-worktree, is of the same kind, and its recorded size, mtime, ctime and inode are the
// file's. An entry whose file's mtime is not older than the index file itself is racily clean
// (the file may have changed within the timestamp tick the entry was recorded in) and is not
// trusted: the stamps are compared in nanoseconds, which on a file system that stamps whole
// seconds is git's whole-second rule.
func (x *Index) CleanID(path string, st FileStat) (string, bool) {
	if x == nil {
		return "", false
	}
	e, ok := x.Entries[path]
	if !ok || e.Flags&(flagIntentToAdd|flagSkipWorktree) != 0 {
		return "", false
	}
	switch {
	case e.Mode == 0o120000 && st.Symlink, (e.Mode == 0o100644 || e.Mode == 0o100755) && st.Regular:
	default:
		return "", false
	}
	if e.Size != uint32(st.Size) || e.MtimeNs != st.MtimeNs || e.CtimeNs != st.CtimeNs ||
		e.Ino != uint64(uint32(st.Ino)) {
		return "", false
	}
	if st.MtimeNs >= x.MtimeNs {
		return "", false // racily clean
	}
	return e.ID, true
}
