package hasher

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/git"
)

// An input file's digest in a key is git's blob id of the file as git would store it: the
// SHA-1 (or, in a SHA-256 repository, the SHA-256) of "blob SIZE\0" and the content after git's
// clean conversion of its line endings. A symlink's is "link:" and the blob id of its target's
// text. The digest is the same whichever way it was obtained — from a watcher's file state,
// from the stat cache for a file hashed before, from git's index for a tracked file the index
// says is clean, or from a read —
// so a fresh clone keys its tasks without reading a file, and a checkout with CRLF line endings
// keys them as one with LF does.

// gitView is what the hasher knows of the git repository holding the workspace, loaded once.
type gitView struct {
	formatOnce sync.Once
	// format is the object format of the blob ids: the repository's, "sha1" outside git.
	format string

	once  sync.Once
	err   error
	inGit bool
	// index holds the workspace's stage-0 entries, by root-relative path; nil outside git.
	index *git.Index

	convOnce sync.Once
	autocrlf string
	convErr  error

	mu sync.Mutex
	// attrMu is held while attributes are asked, so workers needing them wait for one call.
	attrMu sync.Mutex
	// conv holds the conversion of each root-relative path asked about, and the paths asked
	// about with it in one batch.
	conv map[string]git.Conversion

	// opened counts the files opened to make digests (and raw hashes), attrBatches the
	// `git check-attr` calls made.
	opened, attrBatches int
}

// objectFormat answers the object format of the digests, read from the repository's config
// without running git.
func (h *Hasher) objectFormat() string {
	g := &h.git
	g.formatOnce.Do(func() { g.format = filestate.ObjectFormat(h.opts.Root) })
	return g.format
}

// gitState answers the hasher's view of the repository, reading the index on first need.
func (h *Hasher) gitState(ctx context.Context) (*gitView, error) {
	g := &h.git
	format := h.objectFormat()
	g.once.Do(func() {
		x, early, err := h.earlyIndex()
		if !early {
			x, err = git.ReadIndex(ctx, h.opts.Root)
		}
		switch {
		case err == nil && x.Format != format:
			g.err = fmt.Errorf("read git index: object format %s, but the repository's config says %s", x.Format, format)
		case err == nil:
			g.inGit, g.index = true, x
		case notGit(err):
		default:
			g.err = fmt.Errorf("read git index: %w", err)
		}
	})
	return g, g.err
}

// notGit reports whether a git error says the folder is not in a work tree (or git is missing).
func notGit(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), "not a git repository") ||
		strings.Contains(err.Error(), "executable file not found")
}

// FilesOpened answers how many files the hasher opened to hash them.
func (h *Hasher) FilesOpened() int {
	h.git.mu.Lock()
	defer h.git.mu.Unlock()
	return h.git.opened
}

func (g *gitView) countOpen(n int) {
	g.mu.Lock()
	g.opened += n
	g.mu.Unlock()
}

// digestTag prefixes a digest in the stat cache (and a watcher's seeded hashes), telling it from
// the SHA-256 of raw content kept there for outputs.
func digestTag(format string) string { return format + ":" }

// linkDigest is the digest of a symlink whose target is target.
func linkDigest(format, target string) string {
	return "link:" + filestate.BlobID(format, []byte(target))
}

// keyDigest answers the digest of the root-relative file rel, which the caller has just
// lstat'ed (fi), for a key.
func (h *Hasher) keyDigest(ctx context.Context, rel string, fi fs.FileInfo) (string, error) {
	if fi.IsDir() {
		return "", errIsDir
	}
	format := h.objectFormat()
	info := filestate.InfoOf(fi)
	if fi.Mode()&fs.ModeSymlink != 0 {
		target := info.Link
		if target == "" {
			var err error
			if target, err = os.Readlink(filepath.Join(h.opts.Root, filepath.FromSlash(rel))); err != nil {
				return "", err
			}
		}
		return linkDigest(format, target), nil
	}
	tag := digestTag(format)
	h.mu.Lock()
	h.statted++
	h.mu.Unlock()
	if id, ok := strings.CutPrefix(info.Digest, tag); ok {
		return id, nil // the watcher's, of the file as it stats now
	}
	if id, ok, err := h.cachedDigest(rel, info, tag); err != nil || ok {
		return id, err
	}
	g, err := h.gitState(ctx)
	if err != nil {
		return "", err
	}
	if id, ok := g.index.CleanID(rel, gitStat(fi, info)); ok {
		h.remember(rel, info, tag+id, g.index.MtimeNs)
		return id, nil
	}
	return h.readDigest(ctx, g, rel, info)
}

// gitStat is the stat of a file as the index's clean check compares it.
func gitStat(fi fs.FileInfo, info filestate.Info) git.FileStat {
	return git.FileStat{Regular: fi.Mode().IsRegular(), Symlink: fi.Mode()&fs.ModeSymlink != 0,
		Size: info.Size, MtimeNs: info.MtimeNs, CtimeNs: info.CtimeNs, Ino: info.Ino}
}

// cachedDigest answers the digest a stat cache row (this run's, else the index's) vouches for.
func (h *Hasher) cachedDigest(rel string, info filestate.Info, tag string) (string, bool, error) {
	h.mu.Lock()
	row, ok := h.updates[rel]
	h.mu.Unlock()
	if !ok {
		stats, err := h.statCache()
		if err != nil {
			return "", false, err
		}
		row, ok = stats.Get(rel)
	}
	if !ok || !Trusted(row, info) {
		return "", false, nil
	}
	id, ok := strings.CutPrefix(row.Hash, tag)
	return id, ok, nil
}

// remember records a digest in the stat cache rows to store, as of recordedNs.
func (h *Hasher) remember(rel string, info filestate.Info, hash string, recordedNs int64) {
	row := statOf(info)
	row.Hash, row.RecordedNs = hash, recordedNs
	h.mu.Lock()
	h.updates[rel] = row
	h.mu.Unlock()
}

// readDigest reads the file and answers its digest: its blob id, after git's line-ending
// conversion when its content has CRLF line endings and git would convert them. A digest that
// depends on no conversion (no CRLF, or outside git) is remembered in the stat cache; one that
// depends on the path's attributes is made again by the next run.
func (h *Hasher) readDigest(ctx context.Context, g *gitView, rel string, info filestate.Info) (string, error) {
	abs := filepath.Join(h.opts.Root, filepath.FromSlash(rel))
	recorded := h.opts.Now().UnixNano()
	g.countOpen(1)
	h.opts.Counters.Open()
	b, err := filestate.ReadBlob(abs, g.format)
	if err != nil {
		return "", err
	}
	h.mu.Lock()
	h.hashed++
	h.mu.Unlock()
	if !g.inGit || b.Stats.CRLF == 0 {
		h.remember(rel, info, digestTag(g.format)+b.ID, recorded)
		return b.ID, nil
	}
	convert, err := h.converts(ctx, g, rel, b)
	if err != nil || !convert {
		return b.ID, err
	}
	g.countOpen(1)
	h.opts.Counters.Open()
	return filestate.ReadCleanBlob(abs, g.format, b)
}

// converts reports whether git's clean step changes the line endings of the file rel, read as
// b (which holds CRLF): its attributes and core.autocrlf say text, or say auto and the content
// is text and the index's blob of the path holds no CRLF line endings.
func (h *Hasher) converts(ctx context.Context, g *gitView, rel string, b filestate.Blob) (bool, error) {
	conv, err := h.conversion(ctx, g, rel)
	if err != nil {
		return false, err
	}
	switch conv {
	case git.ConvertText:
		return true, nil
	case git.ConvertAuto:
		if b.Stats.Binary() {
			return false, nil
		}
		crlf, err := g.crlfInIndex(ctx, h.opts.Root, rel)
		return !crlf, err
	}
	return false, nil
}

// conversion answers the conversion git applies to rel. The attributes are asked in one
// `git check-attr` for rel and every file of the workspace's listing not asked about yet, so a
// run makes one such call, not one a file.
func (h *Hasher) conversion(ctx context.Context, g *gitView, rel string) (git.Conversion, error) {
	g.convOnce.Do(func() {
		v, err := git.Config(ctx, h.opts.Root, "core.autocrlf")
		g.autocrlf, g.convErr = normalBool(v), err
	})
	if g.convErr != nil {
		return git.ConvertNone, fmt.Errorf("read core.autocrlf: %w", g.convErr)
	}
	g.attrMu.Lock()
	defer g.attrMu.Unlock()
	g.mu.Lock()
	conv, ok := g.conv[rel]
	g.mu.Unlock()
	if ok {
		return conv, nil
	}
	batch := []string{rel}
	h.mu.Lock()
	listing, fresh := h.rootList, !h.rootStale
	h.mu.Unlock()
	g.mu.Lock()
	if fresh {
		for _, f := range listing {
			if _, asked := g.conv[f]; !asked && f != rel {
				batch = append(batch, f)
			}
		}
	}
	g.mu.Unlock()
	attrs, err := git.CheckAttr(ctx, h.opts.Root, batch, git.ConversionAttrs)
	if err != nil {
		return git.ConvertNone, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.attrBatches++
	if g.conv == nil {
		g.conv = map[string]git.Conversion{}
	}
	for _, f := range batch {
		g.conv[f] = git.CleanConversion(attrs[f], g.autocrlf)
	}
	return g.conv[rel], nil
}

// normalBool answers a git boolean's canonical spelling ("true", "false"), or v as it is.
func normalBool(v string) string {
	switch strings.ToLower(v) {
	case "true", "yes", "on", "1":
		return "true"
	case "false", "no", "off", "0", "":
		return "false"
	}
	return strings.ToLower(v)
}

// crlfInIndex reports whether the index's blob of rel (root-relative) is text with CRLF line
// endings, which git's auto conversion then leaves as they are.
func (g *gitView) crlfInIndex(ctx context.Context, root, rel string) (bool, error) {
	if g.index == nil {
		return false, nil
	}
	e, ok := g.index.Entries[rel]
	if !ok || e.Mode == 0o120000 || e.Mode == 0o160000 {
		return false, nil
	}
	content, err := git.Run(ctx, root, "cat-file", "blob", e.ID)
	if err != nil {
		return false, err
	}
	s := filestate.CountText([]byte(content))
	return s.CRLF > 0 && !s.Binary(), nil
}
