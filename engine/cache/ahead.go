package cache

import (
	"context"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/profilerec"
	"github.com/vzn/vx/engine/remote"
)

// A run that reads a remote cache asks for a task's remote entry as soon as it knows the task's
// key (FetchAhead), before a worker takes the task, so that the round trips to the server and the
// download of the entry's blobs overlap other tasks' work instead of holding a worker. The answer
// waits in the run's cache for the task's lookup of that key, which takes it once.

// fetchedAhead is one key's remote answer fetched ahead; done is closed once it is in.
type fetchedAhead struct {
	done  chan struct{}
	m     remote.Meta
	found bool
}

// FetchAhead asks the remote cache for task t's entry under key, unless the local store has one
// (the lookup restores that one and asks no server), and keeps the answer for t's lookup of the
// same key. It returns once the answer is in; a key already asked about is not asked again.
// Without a remote cache to read it does nothing. Its blobs are in the local blob store when it
// returns, unnamed until the lookup that takes them records the entry.
func (c *Cache) FetchAhead(ctx context.Context, t *graph.Task, key string) {
	if c.remote == nil || !c.use.RemoteRead() || ctx.Err() != nil {
		return
	}
	if c.use.LocalRead() {
		if _, found, _ := c.prefetch.entry(key); found {
			return
		}
		if _, found, err := c.st.Entry(context.WithoutCancel(ctx), key); found || err != nil {
			return
		}
	}
	c.aheadMu.Lock()
	if _, asked := c.ahead[key]; asked {
		c.aheadMu.Unlock()
		return
	}
	a := &fetchedAhead{done: make(chan struct{})}
	c.ahead[key] = a
	c.aheadMu.Unlock()
	defer close(a.done)
	region := profilerec.StartBackground(profilerec.WithTask(ctx, t.ID), "remote lookup ahead")
	a.m, a.found = c.remote.fetch(ctx, key)
	region.End()
}

// fetch answers key's remote entry: the answer fetched ahead, once it is in, else the server's.
func (c *Cache) fetch(ctx context.Context, key string) (remote.Meta, bool) {
	c.aheadMu.Lock()
	a := c.ahead[key]
	delete(c.ahead, key)
	c.aheadMu.Unlock()
	if a == nil {
		return c.remote.fetch(ctx, key)
	}
	select {
	case <-a.done:
		return a.m, a.found
	case <-ctx.Done():
		return remote.Meta{}, false
	}
}

// fetchedAheadFound reports whether key's remote entry was fetched ahead and is in: it was asked
// for since the local store had none, and the lookup takes it without asking the store again.
func (c *Cache) fetchedAheadFound(key string) bool {
	c.aheadMu.Lock()
	a := c.ahead[key]
	c.aheadMu.Unlock()
	if a == nil {
		return false
	}
	select {
	case <-a.done:
		return a.found
	default:
		return false
	}
}
