// Package cache is vx's task cache, the one place that reads and writes it: a task's key (from
// package hasher) names an entry, a hit restores the entry's outputs and answers its log, a miss
// runs and Put stores what it made. Go's cmd/go/internal/cache is the model: Get and Put by key,
// blobs named by their content, a torn or wrong entry read as a miss and never as a failure.
//
// # What an entry is
//
// An entry (store.Entry, a row of the index in .vx/index.db) names two blobs of the local blob
// store (.vx/cas/, each named by its SHA-256): the outputs archive — a tar of the task's declared
// outputs, compressed with zstd — and the masked log. It also lists every output file with its
// size, mode and hash, so that a hit can leave alone what is already on disk. Put writes the blobs
// first, then the entry: a crash leaves a miss, never a broken hit.
//
// # Where entries come from
//
// The local store is the store of record. Get looks there first; without a local entry it asks
// the run's Backend, if there is one (a shared remote cache: engine/remote's bazel-remote and
// Turborepo clients, used only from here). A backend's Fetch streams the entry's blobs into the
// local blob store, each checked against its digest as it arrives, and answers its listing; the
// entry is then restored exactly as a local one is, and kept locally once it restored. Put stores
// locally and then uploads from the local store in the background (session.go): a server that is
// down, slow or wrong costs one warning and a miss, never a failed or stalled run. Another backend
// (another protocol, a read-only mirror) is one type with Fetch and Store.
//
// # What a restore may write (every trust rule)
//
// Whoever wrote an entry — this machine, or any machine sharing a server — a restore (restore.go,
// restorefs_*.go) writes only paths that match the task's declared outputs inside its project (or
// inside the workspace for a "//" glob), never into .git or the state folder, never through a
// symlink at any step (folder by folder, O_NOFOLLOW), decompressing no more than the listing's
// sizes, checking each file's hash as it is written and reading blobs only as regular files of a
// bounded size. A restored symlink is relative and points inside the task's own outputs, or at a
// folder of its project that holds it (a package's link to itself), never through another link
// of the outputs, so that its lexical target is the one the file system reaches and the task's
// next run cannot write through it into a source (linkRefusal). Anything else makes the entry bad:
// a miss, and a local bad entry is removed so that the task stores a good one. After a hit the
// outputs are exactly what the entry lists: stale files under the output globs are removed.
// Every path a restore creates or replaces is journaled first (journal.go; a replaced or removed
// file is renamed aside in its folder): a rejected or cancelled restore is rolled back at once,
// and one a kill interrupted is rolled back when the next run opens the cache, so that the outputs
// are as they were and hold no symlink the task did not make.
// Archiving (archive.go) carries the same rules the other way: a task that makes a symlink the
// rule refuses is not cached, with the reason, and never makes an entry others restore.
//
// # Last use
//
// A hit's entry records its last use (what vx cache prune evicts by) at most every touchEvery:
// Hit.Touch says when it is due, and the runner writes it with its batch of executions. Package
// prune chooses what to evict and removes it through Evict.
package cache

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/profilerec"
	"github.com/vzn/vx/engine/remote"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
)

// touchEvery is how stale a hit entry's recorded last use may grow before a hit records it again:
// eviction by last use (vx cache prune) needs no finer clock, and a full hit repeated within it
// rewrites no cache entry row (each holds its output listing, a page or so: 300 hits had cost
// some 600 index pages).
const touchEvery = time.Hour

// Backend is a cache beside the local store of record: a shared server, a mirror. Fetch brings
// key's entry into the local blob store — every blob streamed in and checked against its digest
// — and answers its listing; ok is false for a miss, and an error wrapping remote.ErrUnavailable
// stops the run asking again. Store sends key's entry, whose blobs are in the local blob store. A
// backend that also has Close() is closed with the cache.
type Backend interface {
	Fetch(ctx context.Context, key string, local *store.CAS) (m remote.Meta, ok bool, err error)
	Store(ctx context.Context, key string, m remote.Meta, local *store.CAS) error
}

// FileHasher answers the content hash of a workspace file the caller has just lstat'ed
// (hasher.Hasher's FileHashOf): a restore leaves alone an output whose hash is already the
// entry's.
type FileHasher interface {
	FileHashOf(rel string, fi fs.FileInfo) (string, error)
}

// FileTree answers lstat and folder walks of root-relative paths from the run's file state
// (hasher.Hasher, over a watcher's snapshot or the disk): a hit whose outputs are in place is then
// compared without a look at each file. A FileHasher that is not one is compared on disk.
type FileTree interface {
	Lstat(rel string) (fs.FileInfo, error)
	WalkFiles(base string, fn func(rel string, mode fs.FileMode)) error
}

// Options configure a run's cache.
type Options struct {
	Workspace *graph.Workspace
	Store     *store.Store
	Files     FileHasher
	// Remote is the run's remote cache (ResolveRemote); the zero value is none.
	Remote RemoteConfig
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Notice shows one line about a task (a refused output, a removed entry).
	Notice func(taskID, msg string)
	// Warn shows one line about the run (the remote cache's one warning, an interrupted restore
	// that could not be rolled back); Mask masks secrets in the remote cache's.
	Warn func(msg string)
	Mask func(string) string
	// Prefetch is the entries read before the run (StartPrefetch); nil looks every key up.
	Prefetch *Prefetch
	// Use says which layers the run reads and writes; the zero value reads and writes both.
	Use Use
	// Intact reports whether the outputs of task id's local entry e are known to be in place,
	// as Intact says (vx mcp told its runTasks child so), and how many files its listing holds:
	// such a hit restores nothing. Nil compares every hit's outputs.
	Intact func(id string, e store.Entry) (files int, ok bool)
}

// Cache is one run's cache: the local store, the remote session if any, and the zstd encoder of
// the archives. Close ends it.
type Cache struct {
	ws     *graph.Workspace
	st     *store.Store
	files  FileHasher
	now    func() time.Time
	notice func(taskID, msg string)
	enc    *zstd.Encoder
	// afterChange, when set, is called after each output a restore writes (a test's hook).
	afterChange func(rel string)
	// remote is the run's shared remote cache; nil without one.
	remote *session
	// prefetch is the entries read before the run, nil for none.
	prefetch *Prefetch
	// intact is Options.Intact.
	intact func(id string, e store.Entry) (files int, ok bool)
	// use is Options.Use.
	use Use
	// downloads is what of the run's remote work comes back (SetDownloads).
	downloads Downloads
	// ahead holds the remote answers fetched ahead (FetchAhead) that no lookup has taken yet, by
	// key; under aheadMu.
	aheadMu sync.Mutex
	ahead   map[string]*fetchedAhead
}

// Open starts a run's cache; ctx bounds the remote session's background uploads.
func Open(ctx context.Context, opts Options) (*Cache, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	c := &Cache{ws: opts.Workspace, st: opts.Store, files: opts.Files, now: opts.Now, notice: opts.Notice, enc: enc, prefetch: opts.Prefetch,
		intact: opts.Intact, use: opts.Use, ahead: map[string]*fetchedAhead{}}
	if c.now == nil {
		c.now = time.Now
	}
	if c.notice == nil {
		c.notice = func(string, string) {}
	}
	// A restore that a kill interrupted is rolled back before any task of the workspace runs.
	for _, problem := range recoverJournals(opts.Store.Dir(), opts.Workspace.Root) {
		if opts.Warn != nil {
			opts.Warn(problem)
		}
	}
	if b := opts.Remote.backend(); b != nil {
		c.remote = newSession(ctx, b, opts.Remote.settings, opts.Store.CAS(), opts.Warn, opts.Mask)
	}
	return c, nil
}

// Close waits (bounded) for the uploads still in flight and answers what the remote cache did in
// the run, nil without one. Every goroutine the cache started has ended when it returns.
func (c *Cache) Close() *summary.RemoteCacheRun {
	defer c.enc.Close()
	return c.remote.close(defaultFlush)
}

// Hit is what Get found.
type Hit struct {
	// Entry is the entry restored, Source where it came from (summary.CacheSourceLocal, a
	// summary.SharedSource for another checkout's entry, or summary.CacheSourceRemote) and Log its log.
	Entry  store.Entry
	Source string
	Log    []byte
	// Changed says that files of the task's project were written or removed, so that their
	// listing must be taken again; it holds on a miss too (a restore that failed part way).
	Changed bool
	// Touch says that the entry's recorded last use is due to be written (see touchEvery).
	Touch bool
	// Files is how many files the entry's listing holds.
	Files int
	// OutputsRemote says that the entry's outputs stayed remote: the hit wrote nothing, and
	// Files is 0.
	OutputsRemote bool
}

// Get finds task t's key in the cache, local first, then the remote backend, and restores the
// hit's outputs; ok is false for a miss. A remote hit comes through the same checked restore as a
// local one, and fills the local cache. err is a local entry that could not be read: the remote
// backend is still asked, and without a hit there the answer is a miss with that error.
func (c *Cache) Get(ctx context.Context, t *graph.Task, key string) (hit Hit, ok bool, err error) {
	p, found := c.ws.Project(t.Project)
	if !found {
		return Hit{}, false, fmt.Errorf("task %s: no project %s", t.ID, t.Project)
	}
	if !c.fetchedAheadFound(key) {
		if hit, ok, err = c.getLocal(ctx, p, t, key); ok {
			return hit, true, nil
		}
	}
	return c.getRemote(ctx, p, t, key, hit, err)
}

// GetLocal is Get of the local store alone: what a task asks again once it holds its key's lock,
// since the process it waited for stored its entry there (a remote entry it would have found
// the first time).
func (c *Cache) GetLocal(ctx context.Context, t *graph.Task, key string) (hit Hit, ok bool, err error) {
	p, found := c.ws.Project(t.Project)
	if !found {
		return Hit{}, false, fmt.Errorf("task %s: no project %s", t.ID, t.Project)
	}
	return c.getLocal(ctx, p, t, key)
}

// getLocal looks key up in the local store and restores a hit; err is an entry that could not be
// read.
func (c *Cache) getLocal(ctx context.Context, p *graph.Project, t *graph.Task, key string) (hit Hit, ok bool, err error) {
	if !c.use.LocalRead() {
		return Hit{}, false, nil
	}
	// A point lookup is never worth interrupting, and a cancellable context costs a goroutine in
	// database/sql and another in the SQLite driver for every query.
	region := profilerec.Start(ctx, "cache lookup")
	entry, found, listed := c.prefetch.entry(key)
	files, intact := c.isIntact(t.ID, entry, found)
	if !found || !listed && !intact {
		entry, found, err = c.st.Entry(context.WithoutCancel(ctx), key)
		files, intact = c.isIntact(t.ID, entry, found)
	}
	region.End()
	if err != nil {
		err = fmt.Errorf("read the cache entry of %s: %w", t.ID, err)
	}
	if found && entry.OutputsRemote() && !intact {
		var done bool
		if entry, hit, ok, done = c.localRemoteOnly(ctx, t, entry); done {
			return hit, ok, err
		}
	}
	if found {
		region := profilerec.Start(ctx, "restore")
		log, changed, ok := c.restore(ctx, p, t, entry, intact)
		region.End()
		hit.Changed = changed
		if ok {
			h := c.hit(entry, c.sourceOf(entry), log, changed)
			h.Files = files
			return h, true, nil
		}
	}
	return hit, false, err
}

// getRemote asks the remote backend for key after a local miss (hit, err: what the local lookup
// left) and restores a hit, which it keeps locally where the run writes the local store.
func (c *Cache) getRemote(ctx context.Context, p *graph.Project, t *graph.Task, key string, hit Hit, err error) (Hit, bool, error) {
	if c.remote == nil || !c.use.RemoteRead() || ctx.Err() != nil {
		return hit, false, err
	}
	region := profilerec.Start(ctx, "remote lookup")
	m, found := c.fetch(ctx, key)
	region.End()
	if !found {
		return hit, false, err
	}
	entry := m.Entry(key, t, c.now())
	entry.Checkout = c.ws.Root
	if entry.OutputsRemote() {
		var done bool
		if entry, hit, done = c.remoteHitFiles(ctx, t, entry, hit); done {
			return hit, hit.OutputsRemote, err
		}
	}
	region = profilerec.Start(ctx, "restore")
	log, changed, rerr := c.restoreRemote(ctx, p, t, entry)
	region.End()
	hit.Changed = hit.Changed || changed
	if rerr != nil {
		if ctx.Err() == nil {
			c.remote.reject(fmt.Errorf("%s: %w", t.ID, rerr))
		}
		return hit, false, err
	}
	if !c.use.LocalWrite() {
		// Its blobs stay in the blob store unnamed until a prune removes them.
	} else if err := c.st.PutEntry(context.WithoutCancel(ctx), entry); err != nil {
		c.notice(t.ID, fmt.Sprintf("vx: not cached locally: %v", err))
	}
	c.remote.hit()
	return c.hit(entry, summary.CacheSourceRemote, log, hit.Changed), true, nil
}

// sourceOf answers the cacheSource of a hit on a local entry: "local" when this checkout wrote it
// (or no checkout is recorded), summary.SharedSource of the writer's root when another did.
func (c *Cache) sourceOf(e store.Entry) string {
	if e.Checkout == "" || e.Checkout == c.ws.Root {
		return summary.CacheSourceLocal
	}
	return summary.SharedSource(e.Checkout)
}

// hit answers a restored entry, with its last use due when it is older than touchEvery.
func (c *Cache) hit(e store.Entry, source string, log []byte, changed bool) Hit {
	return Hit{Entry: e, Source: source, Log: log, Changed: changed, Touch: c.now().Sub(e.LastUsed) >= touchEvery, Files: len(e.Outputs)}
}

// isIntact answers whether task id's local entry e (found: there is one) has its outputs in
// place as Options.Intact says, and how many files its listing holds.
func (c *Cache) isIntact(id string, e store.Entry, found bool) (files int, ok bool) {
	if !found || c.intact == nil {
		return len(e.Outputs), false
	}
	if files, ok = c.intact(id, e); !ok {
		files = len(e.Outputs)
	}
	return files, ok
}

// putBlobs writes an entry's outputs archive (none when nil) and log to the blob store, and
// answers their blobs and the entry's size.
func (c *Cache) putBlobs(archive, log []byte) (outputsBlob, logBlob string, size int64, err error) {
	size = int64(len(log))
	if archive != nil {
		if outputsBlob, err = c.st.CAS().Put(archive); err != nil {
			return "", "", 0, err
		}
		size += int64(len(archive))
	}
	if logBlob, err = c.st.CAS().Put(log); err != nil {
		return "", "", 0, err
	}
	return outputsBlob, logBlob, size, nil
}

// Put stores task t's outputs archive and log under key, then the entry naming them, and uploads
// it to the remote cache in the background; took is how long the task ran. It answers the log's
// blob.
func (c *Cache) Put(ctx context.Context, t *graph.Task, key string, log []byte, took time.Duration) (string, error) {
	p, found := c.ws.Project(t.Project)
	if !found {
		return "", fmt.Errorf("task %s: no project %s", t.ID, t.Project)
	}
	dbctx := context.WithoutCancel(ctx)
	region := profilerec.Start(ctx, "archive")
	defer region.End()
	archive, files, err := c.archive(p, t)
	if err != nil {
		return "", err
	}
	outputsBlob, logBlob, size, err := c.putBlobs(archive, log)
	if err != nil {
		return "", err
	}
	now := c.now()
	entry := store.Entry{Hash: key, TaskID: t.ID, Project: t.Project, Command: t.Command,
		OutputsBlob: outputsBlob, Outputs: files, LogBlob: logBlob, Size: size, Duration: took,
		Created: now, LastUsed: now, Checkout: c.ws.Root}
	// Without local writes the blobs are only what the upload reads: unnamed, a prune removes them.
	if c.use.LocalWrite() {
		if err := c.st.PutEntry(dbctx, entry); err != nil {
			return logBlob, err
		}
	}
	if c.remote.writes() && c.use.RemoteWrite() {
		c.remote.upload(ctx, entry.Hash, remote.MetaOf(entry, int64(len(archive)), int64(len(log))))
	}
	return logBlob, nil
}

// restore brings a local hit's outputs back and answers its log; ok is false (a miss) when a blob
// is missing or corrupt or the entry is bad (then it is removed), or a file could not be written;
// changed reports whether files were written or removed. After it, the files matching the task's
// outputs are exactly those the entry lists: what differs is written (never through a symlink,
// only inside the declared outputs, each file's hash checked as it is written) and stale files
// under the output globs are removed. An intact hit (Options.Intact) writes and compares nothing.
func (c *Cache) restore(ctx context.Context, p *graph.Project, t *graph.Task, e store.Entry, intact bool) (log []byte, changed, ok bool) {
	log, err := c.st.CAS().GetBounded(e.LogBlob, e.Size)
	if err != nil {
		return nil, false, false
	}
	if intact {
		return log, false, true
	}
	blob := func() ([]byte, error) { return c.st.CAS().GetBounded(e.OutputsBlob, e.Size) }
	changed, err = extract(ctx, c.ws, p, t, e.Outputs, blob, c.matches, c.journal(t), c.tree())
	// Files of the project were written or removed: the caller lists them again.
	changed = changed || err != nil
	switch {
	case err == nil:
		return log, changed, true
	case errors.Is(err, errBadEntry):
		c.dropEntry(ctx, e, err.Error())
	case ctx.Err() == nil:
		c.notice(e.TaskID, fmt.Sprintf("vx: restore: %v", err))
	}
	return nil, changed, false
}

// restoreRemote restores a fetched entry's outputs through extract, the checks of every hit: only
// the task's declared outputs, never through a symlink, sizes bounded, each file's hash checked.
func (c *Cache) restoreRemote(ctx context.Context, p *graph.Project, t *graph.Task, e store.Entry) (log []byte, changed bool, err error) {
	log, err = c.st.CAS().GetBounded(e.LogBlob, e.Size)
	if err != nil {
		return nil, false, fmt.Errorf("log blob: %w", err)
	}
	blob := func() ([]byte, error) { return c.st.CAS().GetBounded(e.OutputsBlob, e.Size) }
	changed, err = extract(ctx, c.ws, p, t, e.Outputs, blob, c.matches, c.journal(t), c.tree())
	changed = changed || err != nil
	if err != nil {
		return nil, changed, err
	}
	return log, changed, nil
}

// tree answers the run's file state, nil to look at the disk.
func (c *Cache) tree() FileTree {
	tree, _ := c.files.(FileTree)
	return tree
}

// journal answers the journal of a restore of t.
func (c *Cache) journal(t *graph.Task) *journal {
	j := newJournal(c.st.Dir(), c.ws.Root, t.ID)
	j.afterChange = c.afterChange
	return j
}

// dropEntry removes a bad entry so that the task runs and stores a good one.
func (c *Cache) dropEntry(ctx context.Context, e store.Entry, why string) {
	c.notice(e.TaskID, "vx: cache entry "+e.Hash[:min(12, len(e.Hash))]+" removed: "+why)
	if err := c.st.DeleteEntries(context.WithoutCancel(ctx), []string{e.Hash}); err != nil {
		// It stays a miss each time it is read, and the next pass of the task replaces it.
		c.notice(e.TaskID, fmt.Sprintf("vx: cache entry %s could not be removed: %v", e.Hash[:min(12, len(e.Hash))], err))
	}
}
