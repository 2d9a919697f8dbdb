package prune

import (
	"errors"

	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/taskmutex"
)

// claims are the key locks a prune holds on the entries it evicts: no run executes one of those
// keys while it is evicted. A prune holds at most one key lock per entry and waits for none.
type claims struct {
	// all says that every entry is claimed (no key locks to look at).
	all   bool
	locks map[string]*taskmutex.KeyLock
}

// claim takes the key lock of each chosen entry; an entry whose key another process holds is not
// claimed, and held counts those. A dry run only looks (and claims what is free, holding nothing).
// A key whose lock cannot be taken for another reason (a read-only store) is claimed: no run can
// hold it either.
func claim(keys *taskmutex.KeyLocks, chosen []store.Entry, dryRun bool) (c *claims, held int) {
	c = &claims{all: keys == nil, locks: map[string]*taskmutex.KeyLock{}}
	if keys == nil {
		return c, 0
	}
	for _, e := range chosen {
		if dryRun {
			if _, busy := keys.Held(e.Hash); busy {
				held++
			} else {
				c.locks[e.Hash] = nil
			}
			continue
		}
		lk, err := keys.TryLock(e.Hash, "")
		if errors.As(err, new(*taskmutex.KeyHeldError)) {
			held++
			continue
		}
		c.locks[e.Hash] = lk // nil when the lock file could not be made
	}
	return c, held
}

// has reports whether the entry of key is claimed.
func (c *claims) has(key string) bool {
	if c.all {
		return true
	}
	_, ok := c.locks[key]
	return ok
}

// remove removes the lock files of the evicted keys, releasing their locks.
func (c *claims) remove() {
	for key, lk := range c.locks {
		_ = lk.Remove()
		delete(c.locks, key)
	}
}

// release releases the locks still held (a prune that failed part way keeps the lock files).
func (c *claims) release() {
	for _, lk := range c.locks {
		_ = lk.Unlock()
	}
}

// sweepLocks removes the lock files of keys that have no entry left (a task that failed, an entry
// evicted before) and that no process holds.
func sweepLocks(keys *taskmutex.KeyLocks, entries []store.Entry, evicted map[string]bool) {
	if keys == nil {
		return
	}
	kept := make(map[string]bool, len(entries))
	for _, e := range entries {
		if !evicted[e.Hash] {
			kept[e.Hash] = true
		}
	}
	for _, key := range keys.List() {
		if kept[key] {
			continue
		}
		if lk, err := keys.TryLock(key, ""); err == nil {
			_ = lk.Remove()
		}
	}
}
