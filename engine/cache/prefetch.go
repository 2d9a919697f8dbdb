package cache

import (
	"context"

	"github.com/vzn/vx/engine/store"
)

// Prefetch is the cache entries of keys a run knows before it starts (the keys vx mcp handed
// over), or those its tasks most likely hit (each task's newest), read in one query a chunk on a
// goroutine of its own while the run gets ready, where each task's lookup would read one. A lookup waits for it; a key it did not find (or a prefetch
// that failed) is looked up as ever, so that an entry another process made since still hits. An
// entry removed since fails its restore, a miss, as it would have a moment later.
type Prefetch struct {
	done    chan struct{}
	entries map[string]store.Entry
	// unlisted are the keys whose entry came without its output listing (KnownEntries).
	unlisted map[string]bool
}

// StartPrefetch starts reading the entries of keys from st; nil for no keys. Wait waits for it.
func StartPrefetch(ctx context.Context, st *store.Store, keys []string) *Prefetch {
	if len(keys) == 0 {
		return nil
	}
	return startPrefetch(func() (map[string]store.Entry, error) { return st.EntriesOf(ctx, keys) })
}

// StartNewestPrefetch starts reading the newest entry of each task of taskIDs from st, for a run
// that knows no key before it hashes: a task whose key is its newest entry's (an all-hit run's
// every task) takes it from there; nil for no tasks. Wait waits for it.
func StartNewestPrefetch(ctx context.Context, st *store.Store, taskIDs []string) *Prefetch {
	if len(taskIDs) == 0 {
		return nil
	}
	return startPrefetch(func() (map[string]store.Entry, error) { return st.NewestEntriesOf(ctx, taskIDs) })
}

func startPrefetch(read func() (map[string]store.Entry, error)) *Prefetch {
	p := &Prefetch{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		if entries, err := read(); err == nil {
			p.entries = entries
		}
	}()
	return p
}

// KnownEntries answers a prefetch already done: entries, read by another process of the same
// index while it stamped as it still does (handoff.Index); those of the keys unlisted came
// without their output listing, for hits whose outputs are in place (Options.Intact), and are
// read again for any other.
func KnownEntries(entries map[string]store.Entry, unlisted map[string]bool) *Prefetch {
	p := &Prefetch{done: make(chan struct{}), entries: entries, unlisted: unlisted}
	close(p.done)
	return p
}

// Wait waits for the prefetch to end.
func (p *Prefetch) Wait() {
	if p != nil {
		<-p.done
	}
}

// entry answers key's prefetched entry; ok is false when there is none to answer. listed is
// false for an entry without its output listing.
func (p *Prefetch) entry(key string) (e store.Entry, ok, listed bool) {
	if p == nil {
		return store.Entry{}, false, false
	}
	<-p.done
	e, ok = p.entries[key]
	return e, ok, !p.unlisted[key]
}
