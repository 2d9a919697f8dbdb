package runner

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/klauspost/compress/zstd"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/pathglob"
	"github.com/vzn/vx/engine/store"
)

// An output's archive path is relative to its project folder, or "//"-prefixed and relative to the
// workspace root for an output outside the project ("//dist/apps/web/main.js").

// outputSet is a task's declared outputs, resolved against the workspace root.
type outputSet struct {
	root     string // absolute workspace root
	dir      string // the project folder, root-relative
	stateRel string // the state folder, root-relative ("" when outside the root)
	set      *pathglob.Set
	globs    []pathglob.Glob
}

func newOutputSet(ws *graph.Workspace, p *graph.Project, t *graph.Task) (*outputSet, error) {
	set, err := pathglob.NewSet(p.Dir, t.Outputs)
	if err != nil {
		return nil, fmt.Errorf("outputs of %s: %w", t.ID, err)
	}
	globs, _ := pathglob.ParseAll(t.Outputs)
	o := &outputSet{root: ws.Root, dir: p.Dir, set: set, globs: globs}
	if rel, err := filepath.Rel(ws.Root, ws.CacheDir); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		o.stateRel = filepath.ToSlash(rel)
	}
	return o, nil
}

// rootRel maps an archive path to its root-relative path; ok is false for a path that leaves the
// workspace or is not clean.
func (o *outputSet) rootRel(name string) (string, bool) {
	rel, fromRoot := strings.CutPrefix(name, pathglob.RootPrefix)
	if rel == "" || path.Clean(rel) != rel || path.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	if !fromRoot && o.dir != "." {
		rel = o.dir + "/" + rel
	}
	return rel, true
}

// archiveName maps a root-relative path to its archive path.
func (o *outputSet) archiveName(rootRel string) string {
	switch {
	case o.dir == ".":
		return rootRel
	case strings.HasPrefix(rootRel, o.dir+"/"):
		return rootRel[len(o.dir)+1:]
	}
	return pathglob.RootPrefix + rootRel
}

// allowed reports whether a root-relative path is one the task declares as an output.
func (o *outputSet) allowed(rootRel string) bool {
	if o.stateRel != "" && (rootRel == o.stateRel || strings.HasPrefix(rootRel, o.stateRel+"/")) {
		return false
	}
	return rootRel != ".git" && !strings.HasPrefix(rootRel, ".git/") && o.set.Match(rootRel)
}

// list answers the files and symlinks on disk matching the outputs, root-relative and sorted. It
// never descends through a symlinked folder: a symlink is an output itself.
func (o *outputSet) list() ([]string, error) {
	var fsys fs.FS
	found := map[string]bool{}
	for _, g := range o.globs {
		if g.Negated {
			continue
		}
		pattern := g.FromRoot(o.dir)
		if base, ok := strings.CutSuffix(pattern, "/**"); ok && !strings.ContainsAny(base, "*?[{\\") {
			// A whole folder ("dist/**", the common case): walked directly, which costs a
			// fraction of matching each path against the pattern.
			if err := o.walk(base, found); err != nil {
				return nil, fmt.Errorf("glob %q: %w", g.String(), err)
			}
			continue
		}
		if fsys == nil {
			fsys = os.DirFS(o.root)
		}
		matches, err := doublestar.Glob(fsys, pattern, doublestar.WithFilesOnly(), doublestar.WithNoFollow())
		if err != nil {
			return nil, fmt.Errorf("glob %q: %w", g.String(), err)
		}
		for _, m := range matches {
			if o.allowed(m) {
				found[m] = true
			}
		}
	}
	out := make([]string, 0, len(found))
	for f := range found {
		out = append(out, f)
	}
	sort.Strings(out)
	return out, nil
}

// walk adds to found the files and symlinks under the root-relative folder base that the outputs
// allow, never descending through a symlink, into .git or into the state folder. A base that is
// missing, or is not a folder, holds nothing.
func (o *outputSet) walk(base string, found map[string]bool) error {
	start := filepath.Join(o.root, filepath.FromSlash(base))
	fi, err := os.Lstat(start)
	if err != nil {
		return nil
	}
	if !fi.IsDir() {
		// A symlink (or file) where the folder would be is an output itself, when allowed.
		if (fi.Mode().IsRegular() || fi.Mode()&fs.ModeSymlink != 0) && o.allowed(base) {
			found[base] = true
		}
		return nil
	}
	return filepath.WalkDir(start, func(abs string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walked
			}
			return err
		}
		tail := filepath.ToSlash(abs[len(start):]) // "" or "/sub/file"
		rel := base + tail
		if base == "." {
			rel = strings.TrimPrefix(tail, "/")
		}
		if d.IsDir() {
			if abs != start && (rel == ".git" || (o.stateRel != "" && rel == o.stateRel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if (d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0) && o.allowed(rel) {
			found[rel] = true
		}
		return nil
	})
}

// linkInside reports whether a symlink at rootRel with target stays inside the workspace.
func linkInside(rootRel, target string) bool {
	if filepath.IsAbs(target) || strings.HasPrefix(target, "/") {
		return false // an absolute target names one machine's folders, and may lie anywhere
	}
	resolved := path.Clean(path.Join(path.Dir(rootRel), filepath.ToSlash(target)))
	return resolved != ".." && !strings.HasPrefix(resolved, "../")
}

// archive packs the task's declared outputs as a tar.zst archive and lists them. No outputs
// declared (or none found) answers a nil archive. A symlink is archived as a symlink, and only
// when it points inside the workspace; one that points outside is left out with a notice.
func (r *runState) archive(p *graph.Project, t *graph.Task) ([]byte, []store.OutputFile, error) {
	if len(t.Outputs) == 0 {
		return nil, nil, nil
	}
	o, err := newOutputSet(r.opts.Workspace, p, t)
	if err != nil {
		return nil, nil, err
	}
	paths, err := o.list()
	if err != nil {
		return nil, nil, fmt.Errorf("outputs of %s: %w", t.ID, err)
	}
	if len(paths) == 0 {
		return nil, nil, nil
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	files := make([]store.OutputFile, 0, len(paths))
	for _, rel := range paths {
		abs := filepath.Join(o.root, filepath.FromSlash(rel))
		name := o.archiveName(rel)
		fi, err := os.Lstat(abs)
		if err != nil {
			return nil, nil, fmt.Errorf("output %s of %s: %w", name, t.ID, err)
		}
		f := store.OutputFile{Path: name, Mode: uint32(fi.Mode().Perm())}
		// GNU headers: long names and links and any UTF-8 fit, and Go's reader parses them without
		// the byte-by-byte USTAR check it makes of PAX ones (a tenth of a restore's CPU).
		hdr := &tar.Header{Name: name, Mode: int64(fi.Mode().Perm()), Format: tar.FormatGNU}
		var content []byte
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			if f.Link, err = os.Readlink(abs); err != nil {
				return nil, nil, fmt.Errorf("output %s of %s: %w", name, t.ID, err)
			}
			if !linkInside(rel, f.Link) {
				r.display.notice(t.ID, fmt.Sprintf("vx: output %s is a symlink to %s, outside the workspace: not cached", name, f.Link))
				continue
			}
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, f.Link
		case fi.Mode().IsRegular():
			if content, err = os.ReadFile(abs); err != nil {
				return nil, nil, fmt.Errorf("output %s of %s: %w", name, t.ID, err)
			}
			f.Size = int64(len(content))
			f.Hash = hasher.HashBytes(content)
			hdr.Typeflag, hdr.Size = tar.TypeReg, f.Size
		default:
			continue // a socket, a fifo, a device: not an output vx can carry
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, nil, fmt.Errorf("archive outputs of %s: %w", t.ID, err)
		}
		if _, err := tw.Write(content); err != nil {
			return nil, nil, fmt.Errorf("archive outputs of %s: %w", t.ID, err)
		}
		files = append(files, f)
	}
	if err := tw.Close(); err != nil {
		return nil, nil, fmt.Errorf("archive outputs of %s: %w", t.ID, err)
	}
	if len(files) == 0 {
		return nil, nil, nil
	}
	return r.enc.EncodeAll(buf.Bytes(), nil), files, nil
}

// errBadEntry is a cache entry whose archive does not hold what it lists, or lists what the task
// does not declare: a miss, and the entry is removed.
var errBadEntry = errors.New("cache entry does not match its archive or the task's outputs")

// restore brings a hit's outputs back and answers its log; ok is false (a miss) when a blob is
// missing or corrupt or the entry is bad (then it is removed), or a file could not be written.
// After it, the files matching the task's outputs are exactly those the entry lists: what differs
// is written (never through a symlink, only inside the declared outputs, each file's hash checked
// as it is written) and stale files under the output globs are removed.
func (r *runState) restore(ctx context.Context, p *graph.Project, t *graph.Task, e store.Entry) (log []byte, ok bool) {
	log, err := r.st.CAS().GetBounded(e.LogBlob, e.Size)
	if err != nil {
		return nil, false
	}
	blob := func() ([]byte, error) { return r.st.CAS().GetBounded(e.OutputsBlob, e.Size) }
	changed, err := extract(ctx, r.opts.Workspace, p, t, e.Outputs, blob, r.matches)
	if changed || err != nil {
		// Files of the project were written or removed: list them again for later tasks.
		r.hasher.Invalidate(p.Dir)
	}
	switch {
	case err == nil:
		return log, true
	case errors.Is(err, errBadEntry):
		r.dropEntry(ctx, e, err.Error())
	case ctx.Err() == nil:
		r.display.notice(e.TaskID, fmt.Sprintf("vx: restore: %v", err))
	}
	return nil, false
}

// ExtractOutputs restores a cache entry's outputs — the files it lists and the archive (tar.zst)
// holding them — for task t of project p, with every check a hit makes: only paths the task
// declares as outputs, beneath the workspace and never through a symlink, no more bytes than the
// listing says, each file's hash checked; then stale files under the output globs are removed.
// An error wrapping ErrBadEntry means the entry itself is wrong.
func ExtractOutputs(ctx context.Context, ws *graph.Workspace, p *graph.Project, t *graph.Task, files []store.OutputFile, archive []byte) error {
	blob := func() ([]byte, error) { return archive, nil }
	_, err := extract(ctx, ws, p, t, files, blob, func(string, store.OutputFile) bool { return false })
	return err
}

// ErrBadEntry is a cache entry whose archive does not hold what it lists, or that lists what the
// task does not declare.
var ErrBadEntry = errBadEntry

// extract checks the listing against the task's outputs, writes what differs on disk (matches
// says what does not) from the archive blob reads, and removes stale outputs; changed reports
// whether it wrote or removed anything.
func extract(ctx context.Context, ws *graph.Workspace, p *graph.Project, t *graph.Task, files []store.OutputFile,
	blob func() ([]byte, error), matches func(rootRel string, f store.OutputFile) bool) (changed bool, err error) {
	o, err := newOutputSet(ws, p, t)
	if err != nil {
		return false, err
	}
	listed := make(map[string]store.OutputFile, len(files))
	var budget int64
	for _, f := range files {
		rel, ok := o.rootRel(f.Path)
		if !ok || !o.allowed(rel) || (f.Link != "" && !linkInside(rel, f.Link)) || f.Size < 0 {
			return false, fmt.Errorf("%w: it lists %s, which is not one of the task's outputs", errBadEntry, f.Path)
		}
		if _, dup := listed[rel]; dup {
			return false, fmt.Errorf("%w: it lists %s twice", errBadEntry, f.Path)
		}
		listed[rel] = f
		budget += f.Size + 1024
	}
	// Where no output is on disk (every folder they lie under is missing, as after a clean),
	// every listed file is written without a look at its place, and none can be stale.
	fresh := o.absent()
	if fresh {
		matches = func(string, store.OutputFile) bool { return false }
	}
	wrote, err := writeOutputs(ctx, o, listed, budget, blob, matches)
	if err != nil || fresh {
		return wrote || err != nil, err
	}
	removed, err := o.removeStale(listed)
	return wrote || removed, err
}

// absent reports whether no output can be on disk: the folder (or file) each positive pattern is
// fixed to is missing.
func (o *outputSet) absent() bool {
	for _, base := range o.set.Bases() {
		if base == "." || base == "" {
			return false
		}
		if _, err := os.Lstat(filepath.Join(o.root, filepath.FromSlash(base))); !errors.Is(err, fs.ErrNotExist) {
			return false
		}
	}
	return true
}

// dropEntry removes a bad entry so that the task runs and stores a good one.
func (r *runState) dropEntry(ctx context.Context, e store.Entry, why string) {
	r.display.notice(e.TaskID, "vx: cache entry "+e.Hash[:min(12, len(e.Hash))]+" removed: "+why)
	_ = r.st.DeleteEntries(context.WithoutCancel(ctx), []string{e.Hash})
}

// writeOutputs writes the listed outputs that differ from disk from the entry's archive; wrote
// reports whether any did.
func writeOutputs(ctx context.Context, o *outputSet, listed map[string]store.OutputFile, budget int64,
	getBlob func() ([]byte, error), matches func(string, store.OutputFile) bool) (wrote bool, err error) {
	stale := map[string]bool{}
	for rel, f := range listed {
		if !matches(rel, f) {
			stale[rel] = true
		}
	}
	if len(stale) == 0 {
		return false, nil
	}
	return true, writeStale(ctx, o, listed, stale, budget, getBlob)
}

// writeStale writes the stale outputs from the entry's archive.
func writeStale(ctx context.Context, o *outputSet, listed map[string]store.OutputFile, stale map[string]bool, budget int64,
	getBlob func() ([]byte, error)) error {
	blob, err := getBlob()
	if err != nil {
		return fmt.Errorf("%w: outputs blob: %v", errBadEntry, err)
	}
	dec, err := zstd.NewReader(bytes.NewReader(blob), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(budget)+(1<<20)))
	if err != nil {
		return err
	}
	defer dec.Close()
	// The archive can hold no more than what the entry lists: a bomb stops at that bound.
	limited := &io.LimitedReader{R: dec, N: budget + (64 << 10)}
	w, err := newOutputWriter(o.root)
	if err != nil {
		return err
	}
	defer w.close()
	tr := tar.NewReader(limited)
	seen := map[string]bool{}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: %v", errBadEntry, err)
		}
		rel, ok := o.rootRel(hdr.Name)
		f, listedOK := listed[rel]
		if !ok || !listedOK || seen[rel] || sparse(hdr) {
			return fmt.Errorf("%w: archive entry %q", errBadEntry, hdr.Name)
		}
		seen[rel] = true
		switch {
		case hdr.Typeflag == tar.TypeSymlink && f.Link != "" && hdr.Linkname == f.Link:
			if stale[rel] {
				if err := w.symlink(rel, f.Link); err != nil {
					return err
				}
			}
		case hdr.Typeflag == tar.TypeReg && f.Link == "" && hdr.Size == f.Size:
			if stale[rel] {
				if err := w.file(rel, f, tr); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("%w: archive entry %q is not what the entry lists", errBadEntry, hdr.Name)
		}
	}
	for rel := range stale {
		if !seen[rel] {
			return fmt.Errorf("%w: the archive lacks %s", errBadEntry, listed[rel].Path)
		}
	}
	return nil
}

// sparse reports whether an archive entry is a sparse file, whose holes the reader fills with
// zeros that no compressed byte paid for: vx never writes one, and never restores one.
func sparse(hdr *tar.Header) bool {
	if hdr.Typeflag == tar.TypeGNUSparse {
		return true
	}
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

// removeStale deletes the files under the output globs that the entry does not list; removed
// reports whether there were any.
func (o *outputSet) removeStale(listed map[string]store.OutputFile) (removed bool, err error) {
	onDisk, err := o.list()
	if err != nil {
		return false, err
	}
	var stale []string
	for _, rel := range onDisk {
		if _, ok := listed[rel]; !ok {
			stale = append(stale, rel)
		}
	}
	if len(stale) == 0 {
		return false, nil
	}
	root, err := os.OpenRoot(o.root)
	if err != nil {
		return true, err
	}
	defer root.Close()
	for _, rel := range stale {
		if err := root.Remove(filepath.FromSlash(rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return true, fmt.Errorf("remove stale output %s: %w", rel, err)
		}
	}
	return true, nil
}

// matches reports whether the output on disk (root-relative) is the archived one.
func (r *runState) matches(rel string, f store.OutputFile) bool {
	abs := filepath.Join(r.opts.Workspace.Root, filepath.FromSlash(rel))
	fi, err := os.Lstat(abs)
	if err != nil {
		return false
	}
	if f.Link != "" {
		target, err := os.Readlink(abs)
		return err == nil && target == f.Link
	}
	if !fi.Mode().IsRegular() || fi.Size() != f.Size || uint32(fi.Mode().Perm()) != f.Mode {
		return false
	}
	sum, err := r.hasher.FileHashOf(rel, fi)
	return err == nil && sum == f.Hash
}
