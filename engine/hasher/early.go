package hasher

import (
	"context"
	"sync"

	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/git"
)

// Early is what a run that scans asks git first, asked while its config loads, since it needs
// only the workspace's root and state folder: the listing of the workspace, and, for a checkout
// whose stat cache is empty (a fresh clone, where every input's key comes from git's index), the
// index. A hasher of that root and state folder takes them instead of asking again (Options.Early);
// either is taken as of the moment it was read, before any task ran, as the hasher's own would be.
type Early struct {
	root, stateDir string
	wg             sync.WaitGroup

	listing []string
	listErr error

	withIndex bool
	index     *git.Index
	indexErr  error
}

// StartEarly starts asking git for the listing of root (absolute), and for its index when
// withIndex. The caller waits (Wait) before it ends.
func StartEarly(ctx context.Context, root, stateDir string, withIndex bool) *Early {
	e := &Early{root: root, stateDir: stateDir, withIndex: withIndex}
	e.wg.Go(func() { e.listing, e.listErr = filestate.NewScan(root, stateDir).Visible(ctx, ".") })
	if withIndex {
		e.wg.Go(func() { e.index, e.indexErr = git.ReadIndex(ctx, root) })
	}
	return e
}

// Wait waits for what StartEarly started.
func (e *Early) Wait() {
	if e != nil {
		e.wg.Wait()
	}
}

// earlyListing answers the early listing for the hasher's first root listing, waiting for it; ok
// is false where there is none for this hasher, where it failed (the hasher then asks, and reports
// what fails), where the hasher's file state is a watcher's, and for any later listing (one
// taken again after a task wrote files).
func (h *Hasher) earlyListing() (listing []string, ok bool) {
	e := h.opts.Early
	if e == nil || e.root != h.opts.Root || e.stateDir != h.opts.CacheDir {
		return nil, false
	}
	h.mu.Lock()
	first := !h.earlyListed && h.files == nil && !h.tainted
	h.earlyListed = true
	h.mu.Unlock()
	if !first {
		return nil, false
	}
	e.wg.Wait()
	return e.listing, e.listErr == nil
}

// earlyIndex answers the early index and what reading it failed with, waiting for it; taken is
// false where there is none for this hasher (it then reads the index itself).
func (h *Hasher) earlyIndex() (index *git.Index, taken bool, err error) {
	e := h.opts.Early
	if e == nil || !e.withIndex || e.root != h.opts.Root || e.stateDir != h.opts.CacheDir {
		return nil, false, nil
	}
	e.wg.Wait()
	return e.index, true, e.indexErr
}
