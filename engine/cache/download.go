package cache

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vzn/vx/engine/executor"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/remote"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
)

// BlobFetcher brings blobs by digest from a REAPI server's CAS into the local blob store, each
// checked against its digest as it is written (a blob that does not match is refused and nothing
// of it is kept): the execution engine's connection, or a REAPI remote cache.
type BlobFetcher interface {
	Download(ctx context.Context, cas *store.CAS, blobs []remote.Blob) error
}

// Downloads says what of a run's remote work comes back to this machine (vx run --download).
type Downloads struct {
	// Wants reports whether the outputs of task id land in the workspace when it runs remotely or
	// is served by a remote entry whose files are in a REAPI CAS; nil: every task's do.
	Wants func(taskID string) bool
	// Fetcher fetches the files of outputs that stayed remote, before the cache's own REAPI
	// remote cache, if it has one. Without either, an entry whose outputs stayed remote is a miss
	// for a run that wants them.
	Fetcher BlobFetcher
}

// SetDownloads sets what of the run's remote work comes back; it is called before any task runs.
func (c *Cache) SetDownloads(d Downloads) { c.downloads = d }

// wants reports whether task id's outputs are to land in the workspace.
func (c *Cache) wants(id string) bool { return c.downloads.Wants == nil || c.downloads.Wants(id) }

// fetchers answer what fetches remote files, in the order asked: Downloads.Fetcher (the engine
// that made them), then the remote cache's backend when it is a REAPI server (which may hold
// them too).
func (c *Cache) fetchers() []BlobFetcher {
	var out []BlobFetcher
	if c.downloads.Fetcher != nil {
		out = append(out, c.downloads.Fetcher)
	}
	if c.remote != nil && !c.remote.isDown() {
		if f, ok := c.remote.backend.(BlobFetcher); ok {
			out = append(out, f)
		}
	}
	return out
}

// keepsFiles reports whether the remote cache stores an entry by its files' digests in its own
// CAS (a REAPI server), so that an entry whose outputs stayed remote can be uploaded.
func (c *Cache) keepsFiles() bool {
	if c.remote == nil {
		return false
	}
	_, ok := c.remote.backend.(interface{ KeepsFiles() bool })
	return ok
}

// errNoFetcher is an entry whose outputs stayed remote, in a run that has no REAPI server to fetch
// them from.
var errNoFetcher = errors.New("its outputs stayed remote and the run has no REAPI server to fetch them from")

// Materialize makes an entry whose outputs stayed remote a whole local one: it fetches the blob
// of each of its files the local blob store lacks (each checked against its digest as it is
// written), packs them as the outputs archive, stores the archive and then the entry naming it,
// and answers that entry. It writes nothing into the workspace (a hit's restore does), and on any
// failure leaves the entry as it was. An entry that is whole already is answered as it is.
func (c *Cache) Materialize(ctx context.Context, t *graph.Task, e store.Entry) (store.Entry, error) {
	if !e.OutputsRemote() {
		return e, nil
	}
	if err := c.fetchFiles(ctx, e.RemoteFiles()); err != nil {
		return e, fmt.Errorf("fetch the outputs of %s: %w", t.ID, err)
	}
	archive, err := c.pack(t, e.Outputs)
	if err != nil {
		return e, err
	}
	blob, err := c.st.CAS().Put(archive)
	if err != nil {
		return e, err
	}
	whole := e.WithOutputs(blob, int64(len(archive)))
	if c.use.LocalWrite() {
		if err := c.st.PutEntry(context.WithoutCancel(ctx), whole); err != nil {
			return e, err
		}
	}
	return whole, nil
}

// fetchFiles brings the blobs of files the local blob store lacks from the run's fetcher.
func (c *Cache) fetchFiles(ctx context.Context, files []store.OutputFile) error {
	var blobs []remote.Blob
	for _, f := range files {
		if f.Size > 0 && !c.st.CAS().Has(f.Hash) {
			blobs = append(blobs, remote.Blob{Hash: f.Hash, Size: f.Size})
		}
	}
	if len(blobs) == 0 {
		return nil
	}
	err := errNoFetcher
	for _, f := range c.fetchers() {
		if err = f.Download(ctx, c.st.CAS(), blobs); err == nil || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// listingOf checks remote outputs (root-relative) against task t's declared outputs and answers
// them as an entry's listing, in path order: an output the task does not declare is refused by
// name.
func (c *Cache) listingOf(p *graph.Project, t *graph.Task, outputs []executor.RemoteOutput) ([]store.OutputFile, error) {
	o, err := newOutputSet(c.ws, p, t)
	if err != nil {
		return nil, err
	}
	sorted := slices.Clone(outputs)
	slices.SortFunc(sorted, func(a, b executor.RemoteOutput) int { return strings.Compare(a.Path, b.Path) })
	files := make([]store.OutputFile, 0, len(sorted))
	for _, ro := range sorted {
		if !clean(ro.Path) || !o.allowed(ro.Path) {
			return nil, fmt.Errorf("remote output %s of %s is not one of its declared outputs", ro.Path, t.ID)
		}
		f := store.OutputFile{Path: o.archiveName(ro.Path), Mode: 0o644}
		switch {
		case ro.Link != "":
			f.Link, f.Mode = ro.Link, 0o777
		case ro.Executable:
			f.Mode = 0o755
		}
		if ro.Link == "" {
			f.Size, f.Hash = ro.Size, ro.Hash
		}
		files = append(files, f)
	}
	return files, nil
}

// pack makes the outputs archive of a listing whose files' blobs are in the local blob store
// (each read back checked against its hash); nil for an empty listing.
func (c *Cache) pack(t *graph.Task, files []store.OutputFile) ([]byte, error) {
	if len(files) == 0 {
		return nil, nil
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{Name: f.Path, Format: tar.FormatGNU, Mode: int64(f.Mode)}
		var content []byte
		if f.Link != "" {
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, f.Link
		} else {
			var err error
			if content, err = c.st.CAS().GetBounded(f.Hash, f.Size); err != nil {
				return nil, fmt.Errorf("output %s of %s: %w", f.Path, t.ID, err)
			}
			hdr.Typeflag, hdr.Size = tar.TypeReg, f.Size
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("archive outputs of %s: %w", t.ID, err)
		}
		if _, err := tw.Write(content); err != nil {
			return nil, fmt.Errorf("archive outputs of %s: %w", t.ID, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("archive outputs of %s: %w", t.ID, err)
	}
	return c.enc.EncodeAll(buf.Bytes(), nil), nil
}

// remoteOnlyHit answers a hit on entry e whose outputs stay remote: its log, nothing written.
func (c *Cache) remoteOnlyHit(e store.Entry, source string) (Hit, bool) {
	log, err := c.st.CAS().GetBounded(e.LogBlob, e.Size)
	if err != nil {
		return Hit{}, false
	}
	h := c.hit(e, source, log, false)
	h.Files, h.OutputsRemote = 0, true
	return h, true
}

// localRemoteOnly handles a local entry whose outputs stayed remote (found, not intact): a hit
// that restores nothing for a task whose outputs are not wanted (ok, done), else the entry made
// whole (Materialize) for the restore of every hit; a fetch that fails is a miss (done).
func (c *Cache) localRemoteOnly(ctx context.Context, t *graph.Task, e store.Entry) (whole store.Entry, hit Hit, ok, done bool) {
	if !c.wants(t.ID) {
		hit, ok = c.remoteOnlyHit(e, c.sourceOf(e))
		return e, hit, ok, true
	}
	whole, err := c.Materialize(ctx, t, e)
	if err != nil {
		if ctx.Err() == nil {
			c.notice(t.ID, "vx: cache: "+err.Error())
		}
		return e, Hit{}, false, true
	}
	return whole, Hit{}, false, false
}

// remoteHitFiles handles a remote cache hit whose outputs are files in the server's CAS (entry
// remote-only; prev what the local lookup left): for a task whose outputs are not wanted, the
// entry is kept locally and the hit restores nothing (done, hit.OutputsRemote), since a local
// task that needs them later fetches them by that entry; else (or without local writes) the
// entry is made whole for the restore of every hit; a fetch that fails is a miss (done).
func (c *Cache) remoteHitFiles(ctx context.Context, t *graph.Task, e store.Entry, prev Hit) (store.Entry, Hit, bool) {
	if c.KeepsRemote(t.ID) {
		hit, ok := c.remoteOnlyHit(e, "")
		if !ok {
			return e, prev, true
		}
		if err := c.st.PutEntry(context.WithoutCancel(ctx), e); err != nil {
			// A local task that needs these outputs finds no entry to fetch them by.
			c.notice(t.ID, fmt.Sprintf("vx: not cached locally: %v", err))
			return e, prev, true
		}
		c.remote.hit()
		hit.Source = summary.CacheSourceRemote
		return e, hit, true
	}
	whole, err := c.Materialize(ctx, t, e)
	if err != nil {
		if ctx.Err() == nil {
			c.remote.reject(fmt.Errorf("%s: %w", t.ID, err))
		}
		return e, prev, true
	}
	return whole, prev, false
}

// FetchOutputs brings into the workspace the outputs of task t's local entry under key when they
// stayed remote: the entry is made whole (Materialize) and restored through the restore of every
// hit. An entry that is whole, or none, brings nothing: its outputs were restored or made here.
// changed reports whether files of t's project were written or removed.
func (c *Cache) FetchOutputs(ctx context.Context, t *graph.Task, key string) (changed bool, err error) {
	e, found, err := c.st.Entry(context.WithoutCancel(ctx), key)
	if err != nil || !found || !e.OutputsRemote() {
		return false, err
	}
	p, found := c.ws.Project(t.Project)
	if !found {
		return false, fmt.Errorf("task %s: no project %s", t.ID, t.Project)
	}
	whole, err := c.Materialize(ctx, t, e)
	if err != nil {
		return false, err
	}
	blob := func() ([]byte, error) { return c.st.CAS().GetBounded(whole.OutputsBlob, whole.Size) }
	changed, err = extract(ctx, c.ws, p, t, whole.Outputs, blob, c.matches, c.journal(t), c.tree())
	if err != nil {
		return true, fmt.Errorf("restore the outputs of %s: %w", t.ID, err)
	}
	return changed, nil
}
