package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// pump reads the events and errors fsnotify delivers into the dirty set, promptly, so that the
// kernel's queue does not overflow behind a slow settle.
func (w *Watcher) pump() {
	for {
		select {
		case <-w.done:
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			w.record(ev.Name, ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename))
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			w.lost(err)
		}
	}
}

// lost handles an error fsnotify reports: an overflowed queue (events were dropped) means a full
// scan; anything else, that the watcher can no longer vouch for the file state — but EINVAL, which
// fsnotify's inotify backend reports when it drops, at its IN_MOVE_SELF, the watch of a folder
// moved and then removed, which the kernel had dropped already: nothing was lost, the move's and
// the removal's events are in the queue.
func (w *Watcher) lost(err error) {
	if errors.Is(err, syscall.EINVAL) {
		return
	}
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		w.opts.Log("the file watcher's event queue overflowed: the workspace is scanned again")
		w.mu.Lock()
		w.rescan = true
		w.mu.Unlock()
		w.poke()
		return
	}
	w.setFault(fmt.Errorf("the file watcher: %w", err))
}

// record notes one event's path: a barrier's cookie, git's index or ignore rules, or a path of the
// workspace for the next settle, with gone set when the event removed or renamed it (a folder
// there now is another, whose watch is to add, even should it have the old one's inode number).
func (w *Watcher) record(name string, gone bool) {
	if dir, base := filepath.Split(name); filepath.Clean(dir) == w.cookieDir {
		if n, err := strconv.ParseUint(base, 10, 64); err == nil {
			w.mu.Lock()
			if n > w.cookieSeen {
				w.cookieSeen = n
				close(w.seen)
				w.seen = make(chan struct{})
			}
			w.mu.Unlock()
		}
		return
	}
	if w.git.relists(name) {
		w.mu.Lock()
		w.relist = true
		w.mu.Unlock()
		w.poke()
		return
	}
	if w.git.inGitDir(name) {
		return
	}
	rel, err := filepath.Rel(w.opts.Root, name)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return
	}
	if w.opts.StateDir != "" && strings.HasPrefix(name, w.opts.StateDir+string(filepath.Separator)) {
		return // inside the state folder; the folder's own entry (created, removed) is kept
	}
	rel = filepath.ToSlash(rel)
	w.mu.Lock()
	w.pending[rel] = w.pending[rel] || gone
	w.mu.Unlock()
	w.poke()
}

// barrier returns once every event queued before it was read: it creates a file in the cookie
// folder and waits for that file's event, which the one queue delivers after all of theirs.
func (w *Watcher) barrier(ctx context.Context) error {
	w.mu.Lock()
	w.cookie++
	n := w.cookie
	w.mu.Unlock()
	path := filepath.Join(w.cookieDir, strconv.FormatUint(n, 10))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("the file watcher: %w", err)
	}
	f.Close()
	defer os.Remove(path)
	timer := time.NewTimer(w.opts.BarrierWait)
	defer timer.Stop()
	for {
		w.mu.Lock()
		seen, ch := w.cookieSeen, w.seen
		w.mu.Unlock()
		if seen >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-w.done:
			return errors.New("the file watcher stopped")
		case <-timer.C:
			return fmt.Errorf("the file watcher did not hear its own event within %s", w.opts.BarrierWait)
		}
	}
}

// subscription is one subscriber's changes, merged until it takes them.
type subscription struct {
	w       *Watcher
	ch      chan struct{}
	pending Change
	closed  bool
}

// Subscribe answers a channel that is signalled when visible files change, and take, which
// answers (and clears) every change since the last take; cancel ends the subscription. A
// subscriber that is slow to take loses nothing: changes merge.
func (w *Watcher) Subscribe() (signal <-chan struct{}, take func() Change, cancel func()) {
	s := &subscription{w: w, ch: make(chan struct{}, 1)}
	w.mu.Lock()
	w.subs[s] = true
	w.mu.Unlock()
	take = func() Change {
		w.mu.Lock()
		defer w.mu.Unlock()
		c := s.pending
		s.pending = Change{}
		return c
	}
	cancel = func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.subs, s)
	}
	return s.ch, take, cancel
}

// notifyLocked merges a settle's change into every subscription and signals it.
func (w *Watcher) notifyLocked(c Change) {
	if len(c.Paths) == 0 && !c.Rescan {
		return
	}
	for s := range w.subs {
		s.pending.Rescan = s.pending.Rescan || c.Rescan
		s.pending.Paths = mergeSorted(s.pending.Paths, c.Paths)
		select {
		case s.ch <- struct{}{}:
		default:
		}
	}
}

func (s *subscription) closeLocked() {
	if !s.closed {
		s.closed = true
		delete(s.w.subs, s)
	}
}

// mergeSorted merges two sorted lists without repeats.
func mergeSorted(a, b []string) []string {
	if len(a) == 0 {
		return b
	}
	out := make([]string, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}
