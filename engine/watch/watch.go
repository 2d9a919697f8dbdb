// Package watch keeps one file watcher per workspace: the OS's file events (inotify, kqueue,
// ReadDirectoryChangesW, through fsnotify) keep a mirror of the workspace's folders — each file's
// stat, whether git would show it, and the content hash of those a run compares — and a dirty set
// of the paths an event named since the mirror was last brought up to date. A Snapshot of it
// answers a run's file state (filestate.Source) without a stat per file; subscribers (vx watch)
// hear which visible files changed. Anything the watcher cannot vouch for — an overflowed event
// queue, a folder it could not watch — is a full scan, never a stale answer.
package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/vzn/vx/engine/filestate"
)

// Options configure a Watcher.
type Options struct {
	// Root is the workspace root (absolute); StateDir its state folder, never watched.
	Root, StateDir string
	// Seed answers the hash a stat cache row vouches for a file as it stats now, so that the
	// first look reads no file a run already hashed; nil for none.
	Seed func(rel string, info filestate.Info) (hash string, ok bool)
	// Hashed says which files the watcher hashes besides those git would show (what a task's
	// outputs may hold, which a hit compares); nil for none. SetHashed changes it.
	Hashed func(rel string) bool
	// Log receives one line about what the watcher met (a folder it could not watch, an overflow
	// and the full scan after it); nil drops it.
	Log func(msg string)
	// BarrierWait bounds how long Snapshot waits for the events queued before it to be read;
	// 0 means two seconds.
	BarrierWait time.Duration
	// RetryEvery is how often a watcher that could not watch a folder tries again; 0 means one
	// second.
	RetryEvery time.Duration

	// addWatch, when set, is asked before each folder's watch is added: a test's fault (the
	// watch limit reached, a folder the OS refuses) as the OS would answer it.
	addWatch func(abs string) error
}

// Change is what a settle found: the root-relative paths of files git would show (or showed)
// that were written, created or removed, sorted; Rescan when the watcher had to look at
// everything again (its queue overflowed, git's ignore rules or index changed).
type Change struct {
	Paths  []string
	Rescan bool
}

// ErrNotReady says that the watcher is still taking its first look.
var ErrNotReady = errors.New("the file watcher is still taking its first look")

// Watcher watches one workspace. Start makes one; Close ends it and every goroutine it started.
type Watcher struct {
	opts Options
	fsw  *fsnotify.Watcher
	// cookieDir is a private folder of the watcher's own in which Snapshot creates a file to know
	// that every event queued before it has been read (one inotify queue holds them in order).
	cookieDir string
	git       gitState

	// settleMu is held while the mirror is brought up to date; only its holder touches tree.
	settleMu sync.Mutex
	tree     *tree

	mu sync.Mutex
	// pending are the root-relative paths events named since the last settle, each true when one
	// of them removed or renamed it.
	pending map[string]bool
	// relist is set when git's ignore rules or index changed: every visibility is asked again.
	relist bool
	// rescan is set when events may have been lost: the whole mirror is taken again.
	rescan bool
	// rehash is set when what is hashed changed: every file without a hash is looked at again.
	rehash bool
	// fault is what keeps the watcher from vouching for anything (a watch it could not add).
	fault error
	ready bool
	snap  *filestate.Snapshot
	// cookie counts the barriers made, cookieSeen the last whose event was read; seen is closed
	// and replaced when it moves.
	cookie, cookieSeen uint64
	seen               chan struct{}
	hashed             func(rel string) bool
	subs               map[*subscription]bool

	// readyCh is closed once the first look is done, or failed; hashedCh once the files it left
	// unhashed are hashed too, or it failed.
	readyCh  chan struct{}
	hashedCh chan struct{}
	kick     chan struct{}
	done     chan struct{}
	// ctx is cancelled by Close: a settle (and the git calls in it) is the watcher's, never a
	// caller's to interrupt half done.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// stopMounts stops hearing the mount table (watchMounts).
	stopMounts func()
}

// Start starts watching the workspace: the first look (every folder watched and listed, git's
// listing, the hashes) is taken in the background, and Snapshot answers ErrNotReady until it is
// done.
func Start(opts Options) (*Watcher, error) {
	if opts.BarrierWait <= 0 {
		opts.BarrierWait = 2 * time.Second
	}
	if opts.RetryEvery <= 0 {
		opts.RetryEvery = time.Second
	}
	if opts.Log == nil {
		opts.Log = func(string) {}
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", opts.Root, limitError(err, 0))
	}
	cookieDir, err := os.MkdirTemp("", "vx-watch-")
	if err != nil {
		fsw.Close()
		return nil, fmt.Errorf("watch %s: %w", opts.Root, err)
	}
	if err := fsw.Add(cookieDir); err != nil {
		fsw.Close()
		os.RemoveAll(cookieDir)
		return nil, fmt.Errorf("watch %s: %w", opts.Root, limitError(err, 0))
	}
	w := &Watcher{opts: opts, fsw: fsw, cookieDir: cookieDir, pending: map[string]bool{}, seen: make(chan struct{}),
		hashed: opts.Hashed, subs: map[*subscription]bool{}, kick: make(chan struct{}, 1), done: make(chan struct{}), readyCh: make(chan struct{}),
		hashedCh: make(chan struct{})}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	w.git = newGitState(w.ctx, opts.Root, fsw)
	w.tree = newTree(w)
	w.tree.hashed = opts.Hashed
	w.stopMounts = func() {}
	if stop, err := w.watchMounts(); err == nil {
		w.stopMounts = stop
	} else {
		opts.Log("the mount table cannot be read (" + err.Error() + "): a folder mounted over a workspace folder goes unseen")
	}
	w.wg.Go(w.pump)
	w.wg.Go(w.loop)
	return w, nil
}

// Close stops watching; every goroutine of the watcher has ended when it returns.
func (w *Watcher) Close() error {
	select {
	case <-w.done:
		return nil
	default:
	}
	close(w.done)
	w.cancel()
	w.stopMounts()
	err := w.fsw.Close()
	w.wg.Wait()
	os.RemoveAll(w.cookieDir)
	w.mu.Lock()
	for s := range w.subs {
		s.closeLocked()
	}
	w.mu.Unlock()
	return err
}

// SetHashed changes which files beyond the visible ones the watcher hashes (a reloaded config's
// outputs); the next settle hashes what it newly covers.
func (w *Watcher) SetHashed(hashed func(rel string) bool) {
	w.mu.Lock()
	w.hashed = hashed
	w.rehash = true // every file without a hash is looked at again
	w.mu.Unlock()
	w.poke()
}

// Folders answers how many folders the watcher watches.
func (w *Watcher) Folders() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.snap == nil {
		return 0
	}
	return w.snap.Dirs()
}

// Snapshot answers the file state as it is now: every event queued before the call is read and
// the mirror brought up to date first. It fails when the watcher cannot vouch for it — still
// taking its first look, a folder it could not watch, events it missed and is scanning again for —
// and the asker then scans.
func (w *Watcher) Snapshot(ctx context.Context) (*filestate.Snapshot, error) {
	w.mu.Lock()
	ready, fault := w.ready, w.fault
	w.mu.Unlock()
	if fault != nil {
		return nil, fault
	}
	if !ready {
		return nil, ErrNotReady
	}
	if err := w.barrier(ctx); err != nil {
		return nil, err
	}
	w.settle(w.ctx, false)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fault != nil {
		return nil, w.fault
	}
	if w.snap == nil {
		return nil, ErrNotReady
	}
	return w.snap, nil
}

// Ready reports whether the first look is done (and nothing since keeps the watcher from
// vouching for the file state).
func (w *Watcher) Ready() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ready && w.fault == nil
}

// WaitReady waits for the first look: nil once the watcher vouches for the file state, else
// what keeps it from it (a limit too low, with the fix).
func (w *Watcher) WaitReady(ctx context.Context) error {
	return w.wait(ctx, w.readyCh)
}

// WaitHashed is WaitReady, then waits for the files the first look left unhashed (those no stat
// cache vouched for) to be hashed: the snapshots after it are the same one until a file changes,
// where those before it differ in every folder it hashed a file of (a memo keeps its keys against
// one, see runner.Memo).
func (w *Watcher) WaitHashed(ctx context.Context) error {
	return w.wait(ctx, w.hashedCh)
}

// wait waits for ch and answers the watcher's fault.
func (w *Watcher) wait(ctx context.Context, ch chan struct{}) error {
	select {
	case <-ch:
	case <-ctx.Done():
		return ctx.Err()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fault
}

// loop takes the first look, then settles each time events arrive, and hashes what the settles
// left unhashed. A fault (a folder it could not watch) is not for good: while there is one, the
// loop takes everything again every RetryEvery until it can.
func (w *Watcher) loop() {
	ctx := w.ctx
	err := w.tree.firstLook(ctx)
	if err != nil {
		w.setFault(err)
		close(w.readyCh)
		close(w.hashedCh)
	} else {
		w.mu.Lock()
		w.ready = true
		w.mu.Unlock()
		w.settle(ctx, false)
		close(w.readyCh)
		w.settle(ctx, true)
		close(w.hashedCh)
	}
	for {
		var retry <-chan time.Time
		if !w.Ready() {
			retry = time.After(w.opts.RetryEvery)
		}
		select {
		case <-w.done:
			return
		case <-w.kick:
			w.settle(ctx, true)
		case <-retry:
			w.recover(ctx)
		}
	}
}

// recover takes the whole mirror again when a fault keeps the watcher from vouching for the file
// state; once that works, the watcher vouches again, says so, and its subscribers hear of a
// rescan.
func (w *Watcher) recover(ctx context.Context) {
	w.mu.Lock()
	faulted := w.fault != nil
	w.mu.Unlock()
	if !faulted {
		return
	}
	w.settleMu.Lock()
	w.mu.Lock()
	w.pending, w.relist, w.rescan, w.rehash = map[string]bool{}, false, false, false
	hashed := w.hashed
	w.mu.Unlock()
	w.tree.hashed = hashed
	change, err := w.tree.rescan(ctx)
	if err != nil {
		w.settleMu.Unlock()
		if ctx.Err() == nil {
			w.setFault(err)
		}
		return
	}
	snap := w.tree.publish()
	w.mu.Lock()
	w.fault, w.ready, w.snap = nil, true, snap
	w.notifyLocked(change)
	w.mu.Unlock()
	w.settleMu.Unlock()
	w.opts.Log("every folder is watched again")
	w.settle(ctx, true)
}

// poke wakes the loop.
func (w *Watcher) poke() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// setFault records what keeps the watcher from vouching for the file state until recover takes
// everything again, and says so once for each fault that differs from the last.
func (w *Watcher) setFault(err error) {
	w.mu.Lock()
	changed := w.fault == nil || w.fault.Error() != err.Error()
	w.fault, w.snap = err, nil
	w.mu.Unlock()
	if changed {
		w.opts.Log(err.Error() + "; runs scan the workspace themselves until it can")
	}
	w.poke() // the loop then tries again every RetryEvery
}

// inlineHashFiles and inlineHashBytes bound what Snapshot hashes before it answers (an edit's
// few files): more is left to the background, and the asker hashes what is not yet known.
const (
	inlineHashFiles = 256
	inlineHashBytes = 8 << 20
)

// settle brings the mirror up to date with the pending events, publishes a snapshot and tells
// the subscribers. With hash set it then hashes what is left unhashed, outside the lock Snapshot
// waits on; without, it hashes them before publishing when they are few (an edit's).
func (w *Watcher) settle(ctx context.Context, hash bool) {
	w.settleMu.Lock()
	w.mu.Lock()
	pending, relist, rescan, rehash, hashed := w.pending, w.relist, w.rescan, w.rehash, w.hashed
	w.pending, w.relist, w.rescan, w.rehash = map[string]bool{}, false, false, false
	faulted := w.fault != nil
	w.mu.Unlock()
	if faulted {
		w.settleMu.Unlock()
		return
	}
	w.tree.hashed = hashed
	if rehash {
		w.tree.rehashAll()
	}
	change, err := w.tree.apply(ctx, pending, relist, rescan)
	if err != nil {
		w.settleMu.Unlock()
		if ctx.Err() == nil {
			w.setFault(err)
		}
		return
	}
	jobs := w.tree.hashJobs()
	if !hash && len(jobs) > 0 && len(jobs) <= inlineHashFiles && w.tree.jobBytes(jobs) <= inlineHashBytes {
		w.tree.applyHashes(hashAll(ctx, w.opts.Root, jobs))
		jobs = nil
	}
	snap := w.tree.publish()
	w.mu.Lock()
	w.snap = snap
	w.notifyLocked(change)
	w.mu.Unlock()
	w.settleMu.Unlock()
	if hash && len(jobs) > 0 {
		done := hashAll(ctx, w.opts.Root, jobs)
		w.settleMu.Lock()
		if w.tree.applyHashes(done) {
			snap := w.tree.publish()
			w.mu.Lock()
			if w.fault == nil {
				w.snap = snap
			}
			w.mu.Unlock()
		}
		w.settleMu.Unlock()
	}
}

// abs answers the absolute path of a root-relative one.
func (w *Watcher) abs(rel string) string {
	if rel == "." {
		return w.opts.Root
	}
	return filepath.Join(w.opts.Root, filepath.FromSlash(rel))
}
