package cache

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/store"
)

// errBadEntry is a cache entry whose archive does not hold what it lists, or lists what the task
// does not declare: a miss, and the entry is removed.
var errBadEntry = errors.New("cache entry does not match its archive or the task's outputs")

// extract checks the listing against the task's outputs, writes what differs on disk (matches
// says what does not) from the archive blob reads, and removes stale outputs; changed reports
// whether it wrote or removed anything. Every change is journaled in j: a restore that fails or
// is cancelled part way is rolled back (every path it created removed, every path it replaced
// put back), and one that succeeds deletes what it moved aside. The outputs on disk are found
// through tree (nil: on disk).
func extract(ctx context.Context, ws *graph.Workspace, p *graph.Project, t *graph.Task, files []store.OutputFile,
	blob func() ([]byte, error), matches func(rootRel string, f store.OutputFile) bool, j *journal, tree FileTree) (changed bool, err error) {
	changed, err = extractJournaled(ctx, ws, p, t, files, blob, matches, j, tree)
	if err != nil {
		if rerr := j.rollback(); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return changed, err
	}
	j.commit()
	return changed, nil
}

// extractJournaled is extract's work, journaled in j.
func extractJournaled(ctx context.Context, ws *graph.Workspace, p *graph.Project, t *graph.Task, files []store.OutputFile,
	blob func() ([]byte, error), matches func(rootRel string, f store.OutputFile) bool, j *journal, tree FileTree) (changed bool, err error) {
	o, err := newOutputSet(ws, p, t)
	if err != nil {
		return false, err
	}
	o.tree = tree
	listed, budget, err := o.check(files)
	if err != nil {
		return false, err
	}
	// Where no output is on disk (every folder they lie under is missing, as after a clean),
	// every listed file is written without a look at its place, and none can be stale.
	fresh := o.absent()
	if fresh {
		matches = func(string, store.OutputFile) bool { return false }
	}
	wrote, err := writeOutputs(ctx, o, listed, budget, blob, matches, j)
	if err != nil || fresh {
		return wrote || err != nil, err
	}
	removed, err := o.removeStale(listed, j)
	return wrote || removed, err
}

// check answers a cache entry's listing by root-relative path, and the bytes its archive may hold;
// an error wrapping errBadEntry when it lists a path that is not one of the task's outputs, a
// symlink that may not be one (linkRefusal), or a path twice.
func (o *outputSet) check(files []store.OutputFile) (listed map[string]store.OutputFile, budget int64, err error) {
	listed = make(map[string]store.OutputFile, len(files))
	var links map[string]string
	for _, f := range files {
		rel, ok := o.rootRel(f.Path)
		if !ok || !o.allowed(rel) || f.Size < 0 {
			return nil, 0, fmt.Errorf("%w: it lists %s, which is not one of the task's outputs", errBadEntry, f.Path)
		}
		if _, dup := listed[rel]; dup {
			return nil, 0, fmt.Errorf("%w: it lists %s twice", errBadEntry, f.Path)
		}
		if f.Link != "" {
			if links == nil {
				links = map[string]string{}
			}
			links[rel] = f.Link
		}
		listed[rel] = f
		budget += f.Size + 1024
	}
	if rel, why := o.linkRefusals(links); why != "" {
		return nil, 0, fmt.Errorf("%w: %v", errBadEntry, errLinkOut(listed[rel].Path, links[rel], why))
	}
	return listed, budget, nil
}

// Intact reports whether restoring the cache entry that lists files, for task t of project p,
// would change nothing: the listing is the task's, every file it lists is in place as archived
// and no other file lies under the task's outputs, as tree (the outputs' stats and folders) and
// hashes (their contents) see them. vx mcp asks it of its watcher's file state for the hits it
// hands its runTasks child, which then restores nothing of those (handoff.Known's Intact).
func Intact(ws *graph.Workspace, p *graph.Project, t *graph.Task, files []store.OutputFile, tree FileTree, hashes FileHasher) bool {
	o, err := newOutputSet(ws, p, t)
	if err != nil {
		return false
	}
	o.tree = tree
	listed, _, err := o.check(files)
	if err != nil {
		return false
	}
	if o.absent() {
		return len(listed) == 0
	}
	for rel, f := range listed {
		if !outputMatches(ws.Root, tree, hashes, rel, f) {
			return false
		}
	}
	onDisk, err := o.list()
	if err != nil {
		return false
	}
	for _, rel := range onDisk {
		if _, ok := listed[rel]; !ok {
			return false
		}
	}
	return true
}

// absent reports whether no output can be on disk: the folder (or file) each positive pattern is
// fixed to is missing.
func (o *outputSet) absent() bool {
	for _, base := range o.set.Bases() {
		if base == "." || base == "" {
			return false
		}
		if _, err := o.lstat(base); !errors.Is(err, fs.ErrNotExist) {
			return false
		}
	}
	return true
}

// writeOutputs writes the listed outputs that differ from disk from the entry's archive; wrote
// reports whether any did.
func writeOutputs(ctx context.Context, o *outputSet, listed map[string]store.OutputFile, budget int64,
	getBlob func() ([]byte, error), matches func(string, store.OutputFile) bool, j *journal) (wrote bool, err error) {
	stale := map[string]bool{}
	for rel, f := range listed {
		if !matches(rel, f) {
			stale[rel] = true
		}
	}
	if len(stale) == 0 {
		return false, nil
	}
	return true, writeStale(ctx, o, listed, stale, budget, getBlob, j)
}

// writeStale writes the stale outputs from the entry's archive.
func writeStale(ctx context.Context, o *outputSet, listed map[string]store.OutputFile, stale map[string]bool, budget int64,
	getBlob func() ([]byte, error), j *journal) error {
	blob, err := getBlob()
	if err != nil {
		return fmt.Errorf("%w: outputs blob: %v", errBadEntry, err)
	}
	dec, release, err := decoderFor(budget, blob)
	if err != nil {
		return err
	}
	defer release()
	// The archive can hold no more than what the entry lists: a bomb stops at that bound.
	limited := &io.LimitedReader{R: dec, N: budget + (64 << 10)}
	w, err := newOutputWriter(o.root, j)
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

// pooledWindow bounds what a pooled decoder may allocate for a frame's window: an archive whose
// outputs list at most about this much is read through one of decoders, a larger one through a
// decoder of its own bounded by what it lists.
const pooledWindow = 8 << 20

// decoders are the zstd decoders small archives are read through: making one costs more than
// most small archives take to read (its history buffers, about 55 KB, a restore).
var decoders = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(pooledWindow))
	if err != nil {
		return err
	}
	return d
}}

// decoderFor answers a decoder reading blob, an archive whose outputs list budget bytes, whose
// window is bounded by the larger of budget + 1 MiB and pooledWindow; release gives it back.
func decoderFor(budget int64, blob []byte) (dec *zstd.Decoder, release func(), err error) {
	if budget+(1<<20) > pooledWindow {
		dec, err = zstd.NewReader(bytes.NewReader(blob), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(budget)+(1<<20)))
		if err != nil {
			return nil, nil, err
		}
		return dec, dec.Close, nil
	}
	switch got := decoders.Get().(type) {
	case *zstd.Decoder:
		dec = got
	case error:
		return nil, nil, got
	}
	if err := dec.Reset(bytes.NewReader(blob)); err != nil {
		return nil, nil, err // not given back: a decoder that failed to start is not reused
	}
	return dec, func() {
		// A decoder given back holds no reference to the archive it read.
		if dec.Reset(nil) == nil {
			decoders.Put(dec)
		}
	}, nil
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

// removeStale moves aside (journaled in j, deleted when the restore succeeds) the files under the
// output globs that the entry does not list; removed reports whether there were any.
func (o *outputSet) removeStale(listed map[string]store.OutputFile, j *journal) (removed bool, err error) {
	onDisk, err := o.list()
	if err != nil {
		return false, err
	}
	var stale []string
	for _, rel := range onDisk {
		if _, ok := listed[rel]; !ok && !j.isAside(rel) {
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
		aside, err := j.aside(rel)
		if err != nil {
			return true, err
		}
		if err := root.Rename(filepath.FromSlash(rel), filepath.FromSlash(aside)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return true, fmt.Errorf("remove stale output %s: %w", rel, err)
		}
	}
	return true, nil
}

// matches reports whether the output on disk (root-relative) is the archived one.
func (c *Cache) matches(rel string, f store.OutputFile) bool {
	return outputMatches(c.ws.Root, c.tree(), c.files, rel, f)
}

// outputMatches reports whether the output at rel (root-relative) is the archived f, as tree
// (nil: the disk) and hashes see it.
func outputMatches(root string, tree FileTree, hashes FileHasher, rel string, f store.OutputFile) bool {
	abs := filepath.Join(root, filepath.FromSlash(rel))
	var fi fs.FileInfo
	var err error
	if tree != nil {
		fi, err = tree.Lstat(rel)
	} else {
		fi, err = os.Lstat(abs)
	}
	if err != nil {
		return false
	}
	if f.Link != "" {
		if fi.Mode()&fs.ModeSymlink == 0 {
			return false
		}
		target, err := os.Readlink(abs)
		return err == nil && target == f.Link
	}
	if !fi.Mode().IsRegular() || fi.Size() != f.Size || uint32(fi.Mode().Perm()) != f.Mode {
		return false
	}
	sum, err := hashes.FileHashOf(rel, fi)
	return err == nil && sum == f.Hash
}
