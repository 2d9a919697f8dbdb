// Package planmemo keeps what a long-lived process (vx mcp, vx watch) planned last, so that its
// next plan does again only what moved: the tasks' keys, what the cache holds for them, the
// history's estimates, the lockfile read, the verdicts that a hit's outputs are in place, and the
// index held open. The runner plans through it (runner.PlanMemo); it invalidates each by its
// own rule (see Memo).
package planmemo

import (
	"context"
	"crypto/sha256"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/vzn/vx/engine/depversions"
	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/handoff"
	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/pathglob"
	"github.com/vzn/vx/engine/resources"
	"github.com/vzn/vx/engine/runner"
	"github.com/vzn/vx/engine/store"
)

// Memo keeps what a long-lived process (vx mcp, vx watch) planned last, so that its next plan
// does again only what moved. A task's key is computed again when a folder of its file scope
// changed in the watcher's snapshot (its project's folders, the folders its outside inputs lie
// in, the projects it takes a digest of, the global inputs', the root's own files: the lockfile,
// package.json) or a dependency's key moved; every key, for another workspace (an edited config)
// or a plan without a watcher's snapshot. What the cache holds and the history's estimates are
// read again when the index (or the CAS folder) changed. The index is held open between plans.
// It is safe for concurrent use; a plan that cannot use it (no snapshot) leaves it as it was.
type Memo struct {
	mu   sync.Mutex
	ws   *graph.Workspace
	snap *filestate.Snapshot
	keys map[string]string
	hits map[string]bool
	// entries are the cache entries of the keys that hit.
	entries map[string]store.Entry
	runs    map[string][]store.CommandRun
	state   handoff.StateStamp
	// verdicts say, by task id, which entries' outputs were in place (see Intact).
	verdicts map[string]intactVerdict
	// lock is the lockfile the last plan read, reused while no file of the root changed.
	lock  *depversions.Lockfile
	index *store.Store
	// indexIno is the inode of the index file the held store opened.
	indexIno uint64
	// sharedIno is the inode of the shared index file it opened (0: none, or none named).
	sharedIno uint64
	// stamp is the last hand-off stamp, of stampWS and the tasks and environment digested as
	// stampOf.
	stamp   string
	stampWS *graph.Workspace
	stampOf [sha256.Size]byte
	// refresh is the background plan under way (Refresh); closed says that the memo is closed.
	refresh *refresh
	closed  bool
}

// NewMemo answers an empty memo.
func NewMemo() *Memo { return &Memo{} }

// Close stops the memo's background plan and lets go of the index the memo held open.
func (m *Memo) Close() error {
	if m == nil {
		return nil
	}
	m.stopRefresh()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.index == nil {
		return nil
	}
	err := m.index.Close()
	m.index = nil
	return err
}

// HandoffStamp is handoff.Stamp through the memo: the last stamp again while the workspace is the
// same loaded one (a Loader answers another once the config changed) and the tasks and the
// environment are the last ones (figures: docs/performance.md, "The server's shortcuts: memo,
// hand-off, child started ahead").
func (m *Memo) HandoffStamp(ws *graph.Workspace, ids []string, environ []string) string {
	if m == nil {
		return handoff.Stamp(ws, ids, environ)
	}
	h := sha256.New()
	for _, list := range [][]string{ids, environ} {
		for _, s := range list {
			h.Write([]byte(s))
			h.Write([]byte{0})
		}
		h.Write([]byte{1})
	}
	var of [sha256.Size]byte
	h.Sum(of[:0])
	m.mu.Lock()
	if m.stampWS == ws && m.stampOf == of {
		defer m.mu.Unlock()
		return m.stamp
	}
	m.mu.Unlock()
	stamp := handoff.Stamp(ws, ids, environ)
	m.mu.Lock()
	m.stamp, m.stampWS, m.stampOf = stamp, ws, of
	m.mu.Unlock()
	return stamp
}

// View waits for the memo's background plan (Refresh), unless ctx is that plan's, and answers
// the memo's view for a plan of ws over files: nil (reuse nothing, keep nothing) without a memo
// or a watcher's snapshot.
func (m *Memo) View(ctx context.Context, ws *graph.Workspace, files filestate.Source) runner.MemoView {
	// A background plan reads what this one would; the view is taken once it did.
	m.awaitRefresh(ctx)
	if v := m.view(ws, files); v != nil {
		return v
	}
	return nil
}

// memoView is one plan's reading of the memo: which keys, hits and estimates it may reuse.
type memoView struct {
	m *Memo
	// keysOK says that keys may be reused at all; changed are the folders that changed since.
	keysOK  bool
	changed []string
	// stateOK says that the hits and estimates may be reused.
	stateOK bool
	keys    map[string]string
	hits    map[string]bool
	entries map[string]store.Entry
	lock    *depversions.Lockfile
	runs    map[string][]store.CommandRun
	// queried is what this plan read of the history, each task's (none read as nil), for the
	// next.
	queried map[string][]store.CommandRun
	snap    *filestate.Snapshot
	state   handoff.StateStamp
	ws      *graph.Workspace
	// verdicts are the memo's (see Intact).
	verdicts map[string]intactVerdict
}

// view reads the memo for a plan of ws over files; nil (reuse nothing, store nothing) without a
// memo or a watcher's snapshot.
func (m *Memo) view(ws *graph.Workspace, files filestate.Source) *memoView {
	snap, ok := files.(*filestate.Snapshot)
	if m == nil || !ok || snap == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	v := &memoView{m: m, snap: snap, ws: ws, state: handoff.StampState(ws.CacheDir, ws.SharedDir), keys: m.keys, hits: m.hits, entries: m.entries, runs: m.runs,
		verdicts: m.verdicts}
	if m.ws == ws && m.snap != nil {
		v.changed = filestate.ChangedDirs(m.snap, snap)
		v.keysOK = !containsRoot(v.changed)
	}
	v.stateOK = v.keysOK && m.state.Same(v.state)
	if v.keysOK {
		v.lock = m.lock
	}
	return v
}

// HasherOptions answers o with the lockfile the plan may take as read (nil: read it).
func (v *memoView) HasherOptions(o hasher.Options) hasher.Options {
	o.Lockfile = v.lock
	return o
}

func containsRoot(dirs []string) bool {
	for _, d := range dirs {
		if d == "." {
			return true
		}
	}
	return false
}

// Keep keeps a plan's keys, hits with their entries (not those of a forced plan, which looked up
// nothing), estimates and the lockfile h read for the next.
func (v *memoView) Keep(nodes []runner.KeyedTask, entries map[string]store.Entry, force bool, h *hasher.Hasher) {
	lock := h.Lockfile()
	if lock == nil {
		lock = v.lock
	}
	keys := make(map[string]string, len(nodes))
	hitKeys := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		keys[n.Task.ID] = n.Key
		if n.Task.Cache {
			hitKeys[n.Key] = n.Hit
		}
	}
	v.m.mu.Lock()
	defer v.m.mu.Unlock()
	if force {
		hitKeys, entries = nil, nil
	}
	v.m.ws, v.m.snap, v.m.keys, v.m.hits, v.m.entries, v.m.runs, v.m.state, v.m.lock = v.ws, v.snap, keys, hitKeys, entries, v.queried, v.state, lock
}

// KeepKeys keeps a plan's keys and the lockfile h read for the next, leaving what the memo knew
// of the cache and the history as it was.
func (v *memoView) KeepKeys(nodes []runner.KeyedTask, h *hasher.Hasher) {
	lock := h.Lockfile()
	if lock == nil {
		lock = v.lock
	}
	keys := make(map[string]string, len(nodes))
	for _, n := range nodes {
		keys[n.Task.ID] = n.Key
	}
	v.m.mu.Lock()
	defer v.m.mu.Unlock()
	v.m.ws, v.m.snap, v.m.keys, v.m.lock = v.ws, v.snap, keys, lock
}

// Key answers the memo's key of n when nothing it is made of moved: its dependencies' keys are
// the ones it was made with (depKeys, as computed now), no folder of its file scope changed, and
// it runs no runtime probe.
func (v *memoView) Key(n runner.KeyedTask, depKeys map[string]string) (string, bool) {
	if !v.keysOK || probed(v.ws, n.Task) {
		return "", false
	}
	k, ok := v.keys[n.Task.ID]
	if !ok {
		return "", false
	}
	for id, dk := range depKeys {
		if v.keys[id] != dk {
			return "", false
		}
	}
	if len(v.changed) == 0 {
		return k, true
	}
	for _, dir := range v.scope(n) {
		// A base may be a file (a literal input): the folder holding it changed then.
		if touches(v.changed, dir) || slices.Contains(v.changed, path.Dir(dir)) {
			return "", false
		}
	}
	return k, true
}

// probed reports whether t's key holds runtime probes' outputs (runtimeInputs, the workspace's
// globalRuntimeInputs): a tool upgrade moves no folder, so such a key is made again, probes run.
func probed(ws *graph.Workspace, t *graph.Task) bool {
	return len(t.RuntimeInputs) > 0 || (ws != nil && len(ws.GlobalRuntimeInputs) > 0)
}

// touches reports whether a changed folder lies in (or is) dir.
func touches(changed []string, dir string) bool {
	if dir == "." || dir == "" {
		return len(changed) > 0
	}
	prefix := dir + "/"
	for _, c := range changed {
		if c == dir || strings.HasPrefix(c, prefix) {
			return true
		}
	}
	return false
}

// scope answers the folders whose files a task's key is made of.
func (v *memoView) scope(n runner.KeyedTask) []string {
	t, p := n.Task, n.Project
	dirs := []string{p.Dir}
	if !t.InputsDefault() {
		if set, err := pathglob.NewSet(p.Dir, t.OwnInputs()); err == nil {
			dirs = append(dirs, set.Bases()...)
		} else {
			return []string{"."}
		}
	}
	for _, name := range append(append([]string(nil), t.Through...), t.DependencyFiles...) {
		if q, ok := v.ws.Project(name); ok {
			dirs = append(dirs, q.Dir)
		}
	}
	if len(v.ws.GlobalInputs) > 0 {
		set, err := pathglob.NewSet(".", v.ws.GlobalInputs)
		if err != nil {
			return []string{"."}
		}
		dirs = append(dirs, set.Bases()...)
	}
	return dirs
}

// Hit answers the memo's cache status of key, with the entry of a hit, while the index is as it
// was.
func (v *memoView) Hit(key string) (hit bool, e store.Entry, ok bool) {
	if !v.stateOK {
		return false, store.Entry{}, false
	}
	if hit, ok = v.hits[key]; !ok || !hit {
		return false, store.Entry{}, ok
	}
	// A hit whose entry the memo lacks is looked up again.
	e, ok = v.entries[key]
	return ok, e, ok
}

// HandedIndex answers what the memo knows of the index for a run of nodes, whose keys are made:
// the entry of every cached task's key that hits, and every task's recent command runs, read while
// the state folder stamped as it does now. What it does not know of them (a key a plan made after
// an edit was undone, a task no plan asked about) is read from st (the memo's own index) and kept
// for the next plan; nil when the index changed since the memo read it, or reading it failed.
func (v *memoView) HandedIndex(ctx context.Context, st *store.Store, nodes []runner.KeyedTask) *handoff.Index {
	if !v.stateOK {
		return nil
	}
	h := &handoff.Index{State: v.state, Entries: map[string]store.Entry{}, Runs: make(map[string][]store.CommandRun, len(nodes))}
	var unknownRuns, unknownKeys []string
	for _, n := range nodes {
		if runs, ok := v.runs[n.Task.ID]; ok {
			h.Runs[n.Task.ID] = runs
		} else {
			unknownRuns = append(unknownRuns, n.Task.ID)
		}
		if !n.Task.Cache {
			continue
		}
		switch hit, e, ok := v.Hit(n.Key); {
		case !ok:
			unknownKeys = append(unknownKeys, n.Key)
		case hit:
			h.Entries[n.Key] = e
		}
	}
	if len(unknownRuns) == 0 && len(unknownKeys) == 0 {
		return h
	}
	runs, hits, err := readUnknown(ctx, st, unknownRuns, unknownKeys)
	if err != nil {
		return nil
	}
	for _, id := range unknownRuns {
		h.Runs[id] = runs[id]
	}
	for key, e := range hits {
		h.Entries[key] = e
	}
	v.m.learn(v.state, unknownRuns, runs, unknownKeys, hits)
	return h
}

// readUnknown reads from st the recent command runs of the tasks ids (a task that never ran
// absent) and the entries of keys that hit: in the index, with their blobs in the CAS, as a run
// finds them (the runner's own look-up of a hit).
func readUnknown(ctx context.Context, st *store.Store, ids, keys []string) (runs map[string][]store.CommandRun, hits map[string]store.Entry, err error) {
	if runs, err = st.RecentCommandRuns(ctx, ids, resources.EstimateWindow); err != nil {
		return nil, nil, err
	}
	hits = map[string]store.Entry{}
	if len(keys) == 0 {
		return runs, hits, nil
	}
	entries, err := st.EntriesOf(ctx, keys)
	if err != nil {
		return nil, nil, err
	}
	for key, e := range entries {
		if st.CAS().Has(e.LogBlob) && (e.OutputsBlob == "" || st.CAS().Has(e.OutputsBlob)) {
			hits[key] = e
		}
	}
	return runs, hits, nil
}

// learn adds to the memo what was read of the index while its state folder stamped as state: the
// recent runs of the tasks ids (none: nil) and whether each of keys hits, with the entries of
// those that do. The memo's maps are replaced, never written in place: a plan under way reads
// the ones it was given.
func (m *Memo) learn(state handoff.StateStamp, ids []string, runs map[string][]store.CommandRun, keys []string, hits map[string]store.Entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.state.Same(state) {
		return
	}
	if len(ids) > 0 {
		all := maps.Clone(m.runs)
		if all == nil {
			all = make(map[string][]store.CommandRun, len(ids))
		}
		for _, id := range ids {
			all[id] = runs[id]
		}
		m.runs = all
	}
	if len(keys) > 0 {
		hitKeys, entries := maps.Clone(m.hits), maps.Clone(m.entries)
		if hitKeys == nil {
			hitKeys = make(map[string]bool, len(keys))
		}
		if entries == nil {
			entries = make(map[string]store.Entry, len(hits))
		}
		for _, key := range keys {
			e, hit := hits[key]
			hitKeys[key] = hit
			if hit {
				entries[key] = e
			}
		}
		m.hits, m.entries = hitKeys, entries
	}
}

// RecentRuns answers the history's recent command runs of ids (a task with none absent): the
// memo's while the index is as it was, the index's for the rest; it keeps what it answered for
// the next plan.
func (v *memoView) RecentRuns(ctx context.Context, st *store.Store, ids []string) (map[string][]store.CommandRun, error) {
	known := v.runs
	if !v.stateOK {
		known = nil
	}
	out, queried, err := runner.RecentRuns(ctx, st, ids, known)
	if err != nil {
		return nil, err
	}
	v.queried = queried
	return out, nil
}

// OpenIndex answers a read-only store of the state folder dir and the shared store shared ("" for
// the one dir's index records): the memo's, opened once and again when either index file was
// replaced or created, or (without a memo, or an index) one of its own, which release closes.
func (m *Memo) OpenIndex(ctx context.Context, dir, shared string) (st *store.Store, release func(), err error) {
	if m == nil {
		st, err = store.OpenReadOnlyShared(ctx, dir, shared)
		if err != nil {
			return nil, nil, err
		}
		return st, func() { st.Close() }, nil
	}
	ino := inoOf(store.IndexPath(dir))
	sharedIno := uint64(0)
	if shared != "" {
		sharedIno = inoOf(store.SharedIndexPath(shared))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.index != nil && m.indexIno == ino && m.sharedIno == sharedIno && m.index.Dir() == dir && (shared == "" || m.index.SharedDir() == shared) {
		return m.index, func() {}, nil
	}
	if m.index != nil {
		m.index.Close()
		m.index = nil
	}
	st, err = store.OpenReadOnlyShared(ctx, dir, shared)
	if err != nil {
		return nil, nil, err
	}
	if ino == 0 {
		return st, func() { st.Close() }, nil
	}
	m.index, m.indexIno, m.sharedIno = st, ino, sharedIno
	return st, func() {}, nil
}

// inoOf answers the inode of path, 0 when it cannot be stat'ed.
func inoOf(path string) uint64 {
	if fi, err := os.Stat(path); err == nil {
		return filestate.InfoOf(fi).Ino
	}
	return 0
}
