// Package prune frees cache space: it chooses the cache entries to evict by age and total size
// (least recently used first) and the blobs no entry references (orphans), and removes them
// through package cache (cache.Evict). It never removes run history, nor
// the failure logs history keeps.
package prune

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/vzn/vx/engine/bytesize"
	"github.com/vzn/vx/engine/cache"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/statedirs"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/taskmutex"
	"github.com/vzn/vx/engine/vxerr"
	"github.com/vzn/vx/engine/workspace"
)

// tempGrace is how old a leftover temporary blob must be before it counts as an orphan: a younger
// one may be a write in progress.
const tempGrace = time.Hour

// Options say what to prune.
type Options struct {
	// OlderThan evicts entries last used longer ago than this; 0 for no age limit.
	OlderThan time.Duration
	// MaxSize, when not nil, evicts least recently used entries until the rest fit in this many
	// bytes: 0 evicts every entry.
	MaxSize *int64
	// DryRun answers what would be pruned and removes nothing.
	DryRun bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Root is the workspace root the stat cache's paths are relative to: its rows for files that
	// no longer exist are removed too. "" leaves the stat cache alone.
	Root string
	// Keys are the key locks of the store: an entry whose key a run holds (it is executing it)
	// is not evicted, and the lock files of evicted keys, and of keys with no entry that no one
	// holds, are removed. Nil evicts without looking.
	Keys *taskmutex.KeyLocks
}

// Result is `vx cache prune --format json`.
type Result struct {
	DryRun bool `json:"dryRun"`
	// EvictedCount counts Evicted: the original's evicted.
	EvictedCount int `json:"evicted"`
	// BytesFreed counts the evicted entries' blobs and the orphans (what was, or would be, freed).
	BytesFreed int64 `json:"bytesFreed"`
	// Orphans counts blobs no entry references (and stale temporary files); OrphanBytes their size.
	Orphans     int   `json:"orphans"`
	OrphanBytes int64 `json:"orphanBytes"`
	// StaleFileStats counts stat-cache rows of files that no longer exist (removed, or would be).
	StaleFileStats int `json:"staleFileStats"`
	// Held counts the entries chosen for eviction that were kept because a run (in this checkout
	// or another sharing the store) holds their key.
	Held int `json:"held"`
	// Evicted lists the entries evicted (or that would be), least recently used first.
	Evicted []Evicted `json:"evictedEntries"`
}

// Request is what vx cache prune and the pruneCache tool are asked, the limits as written.
type Request struct {
	// OlderThan evicts entries last used longer ago than this (ParseAge: 12h, 7d, 2w); "" for no
	// age limit.
	OlderThan string
	// MaxSize evicts least recently used entries until the rest fit in this size (bytesize.Parse: 500MB,
	// 2G); 0 evicts every entry; "" for no size limit.
	MaxSize string
	// DryRun answers what would be pruned and removes nothing.
	DryRun bool
	// Getenv reads VX_CACHE_DIR and VX_STATE_DIR; nil means os.Getenv.
	Getenv func(string) string
	// Dirs answers the workspace's state folders (workspace.Loader.StoreDirs); nil resolves them
	// from the root and Getenv, without the config.
	Dirs func(ctx context.Context) (statedirs.Dirs, error)
	// Retention, when not nil, is what a request with neither limit evicts (the workspace's
	// cacheRetention, Retention).
	Retention *Limits
}

// The Request fields a ValueError names.
const (
	FieldOlderThan = "olderThan"
	FieldMaxSize   = "maxSize"
)

// ValueError is a Request value Run cannot read: a usage error, whose message is the value's own
// (`size "lots": want a size such as 500MB or 2G`).
type ValueError struct {
	// Field is FieldOlderThan or FieldMaxSize.
	Field string
	Err   error
}

// Error returns the value's message.
func (e *ValueError) Error() string { return e.Err.Error() }

// Unwrap returns the usage error.
func (e *ValueError) Unwrap() error { return e.Err }

// Run answers `vx cache prune --format json` for req: it reads the limits (a *ValueError for one
// it cannot read), finds the workspace root through root (called only then, so that a value vx
// cannot read is named first, even outside a workspace), opens its state folder as a prune needs
// it (Open) and prunes it. vx cache prune and the pruneCache tool both answer it.
func Run(ctx context.Context, root func() (string, error), req Request) (*Result, error) {
	opts := Options{DryRun: req.DryRun}
	if req.OlderThan != "" {
		age, err := ParseAge(req.OlderThan)
		if err != nil {
			return nil, &ValueError{Field: FieldOlderThan, Err: err}
		}
		opts.OlderThan = age
	}
	if req.MaxSize != "" {
		size, err := bytesize.Parse(req.MaxSize, bytesize.NonNegative)
		if err != nil {
			return nil, &ValueError{Field: FieldMaxSize, Err: &vxerr.UsageError{Msg: err.Error()}}
		}
		opts.MaxSize = &size
	}
	if l := req.Retention; l != nil && req.OlderThan == "" && req.MaxSize == "" {
		opts.OlderThan, opts.MaxSize = l.MaxAge, &l.MaxSize
	}
	var err error
	if opts.Root, err = root(); err != nil {
		return nil, err
	}
	dirs := workspace.StoreDirs(opts.Root, "", "", req.Getenv)
	if req.Dirs != nil {
		if dirs, err = req.Dirs(ctx); err != nil {
			return nil, err
		}
	}
	st, err := OpenShared(ctx, dirs.Checkout, dirs.Shared, req.DryRun)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	// The key locks live beside the entries: in the shared store.
	opts.Keys = taskmutex.Keys(cmp.Or(st.SharedDir(), st.Dir()), opts.Root)
	return Prune(ctx, st, opts)
}

// Open opens the state folder dir as a prune needs it: read-only for a dry run, or where there is
// no index (then nothing is created), for writing otherwise.
func Open(ctx context.Context, dir string, dryRun bool) (*store.Store, error) {
	return OpenShared(ctx, dir, "", dryRun)
}

// OpenShared is Open of the checkout's folder dir and the shared store shared ("" for the one
// dir's index records): a prune evicts from the shared store, and reads and cleans the checkout's
// stat cache.
func OpenShared(ctx context.Context, dir, shared string, dryRun bool) (*store.Store, error) {
	var st *store.Store
	var err error
	if dryRun || !exists(store.IndexPath(dir)) && (shared == "" || !exists(store.SharedIndexPath(shared))) {
		st, err = store.OpenReadOnlyShared(ctx, dir, shared)
	} else {
		if shared == "" {
			if ro, err := store.OpenReadOnly(ctx, dir); err == nil {
				shared = ro.SharedDir()
				ro.Close()
			}
		}
		st, err = store.Open(ctx, dir, store.Options{SharedDir: shared})
	}
	if err != nil {
		return nil, fmt.Errorf("open the state folder: %w", err)
	}
	return st, nil
}

// exists reports whether path can be stat'ed.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// staleFileStats lists the stat cache's paths whose files are gone from root.
func staleFileStats(ctx context.Context, st *store.Store, root string) ([]string, error) {
	stats, err := st.FileStats(ctx)
	if err != nil {
		return nil, err
	}
	var stale []string
	for p := range stats.All() {
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p))); errors.Is(err, os.ErrNotExist) {
			stale = append(stale, p)
		}
	}
	sort.Strings(stale)
	return stale, nil
}

// Evicted is one evicted cache entry.
type Evicted struct {
	Hash     string    `json:"hash"`
	TaskID   string    `json:"taskId"`
	Size     int64     `json:"size"`
	LastUsed time.Time `json:"lastUsed"`
}

// Prune evicts entries and removes orphan blobs of st (a dry run needs only a read-only store).
func Prune(ctx context.Context, st *store.Store, opts Options) (*Result, error) {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	if !opts.DryRun && st.ReadOnly() && !st.Empty() {
		return nil, fmt.Errorf("prune: the index is open read-only")
	}
	res := &Result{DryRun: opts.DryRun, Evicted: []Evicted{}}
	entries, err := st.Entries(ctx, store.EntryQuery{})
	if err != nil {
		return nil, err
	}
	chosen, evict := choose(entries, opts, now())
	claims, held := claim(opts.Keys, chosen, opts.DryRun)
	defer claims.release()
	res.Held = held
	var evicted []store.Entry
	for _, e := range chosen {
		if claims.has(e.Hash) {
			res.Evicted = append(res.Evicted, Evicted{Hash: e.Hash, TaskID: e.TaskID, Size: e.Size, LastUsed: e.LastUsed.UTC()})
			res.BytesFreed += e.Size
			evicted = append(evicted, e)
		}
	}
	refs, err := st.ReferencedBlobs(ctx)
	if err != nil {
		return nil, err
	}
	blobs, err := st.CAS().Walk()
	if err != nil {
		return nil, err
	}
	var orphans []store.BlobInfo
	for _, b := range blobs {
		if b.Temp {
			if now().Sub(b.ModTime) > tempGrace {
				orphans = append(orphans, b)
			}
			continue
		}
		if !refs[b.Name] {
			orphans = append(orphans, b)
		}
	}
	for _, b := range orphans {
		res.Orphans++
		res.OrphanBytes += b.Size
	}
	res.BytesFreed += res.OrphanBytes
	res.EvictedCount = len(res.Evicted)
	var stale []string
	if opts.Root != "" {
		if stale, err = staleFileStats(ctx, st, opts.Root); err != nil {
			return nil, err
		}
		res.StaleFileStats = len(stale)
		if !opts.DryRun && len(stale) > 0 {
			if err := st.DeleteFileStats(ctx, stale); err != nil {
				return nil, err
			}
		}
	}
	if opts.DryRun {
		return res, nil
	}
	if len(evicted) > 0 || len(orphans) > 0 {
		if err := cache.Evict(ctx, st, evicted, orphans); err != nil {
			return nil, err
		}
	}
	claims.remove()
	sweepLocks(opts.Keys, entries, evict)
	return res, nil
}

// choose sorts entries least recently used first and answers those opts evicts at now (by
// age, then by size), in that order, and their keys.
func choose(entries []store.Entry, opts Options, now time.Time) (chosen []store.Entry, evict map[string]bool) {
	sort.Slice(entries, func(i, j int) bool {
		if !entries[i].LastUsed.Equal(entries[j].LastUsed) {
			return entries[i].LastUsed.Before(entries[j].LastUsed)
		}
		return entries[i].Hash < entries[j].Hash
	})
	var total int64
	for _, e := range entries {
		total += e.Size
	}
	evict = map[string]bool{}
	if opts.OlderThan > 0 {
		cutoff := now.Add(-opts.OlderThan)
		for _, e := range entries {
			if e.LastUsed.Before(cutoff) {
				evict[e.Hash] = true
				total -= e.Size
			}
		}
	}
	if opts.MaxSize != nil {
		for _, e := range entries {
			if total <= *opts.MaxSize {
				break
			}
			if !evict[e.Hash] {
				evict[e.Hash] = true
				total -= e.Size
			}
		}
	}
	for _, e := range entries {
		if evict[e.Hash] {
			chosen = append(chosen, e)
		}
	}
	return chosen, evict
}

// ParseAge reads a duration such as 90m, 12h, 7d or 2w (graph.ParseAge), as a usage error.
func ParseAge(s string) (time.Duration, error) {
	d, err := graph.ParseAge(s)
	if err != nil {
		return 0, &vxerr.UsageError{Msg: err.Error()}
	}
	return d, nil
}
