package runner

import (
	"sync"
	"sync/atomic"

	"github.com/vzn/vx/engine/handoff"
	"github.com/vzn/vx/engine/store"
)

// handedKeys are the keys a run was handed (Options.Known) while it may take them: until the run
// writes a file, or a key made from the files differs from a handed one; and, as long, the hits
// whose outputs the server found in place.
type handedKeys struct {
	keys   map[string]string
	intact map[string]handoff.IntactHit
	// off is set once the run wrote a file or a handed key proved wrong.
	off atomic.Bool
	// wrongOnce says the first wrong key once.
	wrongOnce sync.Once
}

func newHandedKeys(known *handoff.Known) *handedKeys {
	if known == nil || len(known.Keys) == 0 {
		return nil
	}
	return &handedKeys{keys: known.Keys, intact: known.Intact}
}

// isIntact reports whether the outputs of task id's local entry e were in place in the handed
// file state, while the run may take what it was handed: e is the entry of the task's handed key
// and of the outputs blob the server found in place. It answers how many files the entry's listing
// holds. Such a hit restores nothing.
func (k *handedKeys) isIntact(id string, e store.Entry) (files int, ok bool) {
	if k == nil || k.off.Load() {
		return 0, false
	}
	hit, ok := k.intact[id]
	if !ok || hit.Blob != e.OutputsBlob || k.keys[id] != e.Hash {
		return 0, false
	}
	return hit.Files, true
}

// key answers the handed key of task id while the run may take it and every dependency's key
// (depKeys, as the run made them) is the handed one.
func (k *handedKeys) key(id string, depKeys map[string]string) (string, bool) {
	if k == nil || k.off.Load() {
		return "", false
	}
	key, ok := k.keys[id]
	if !ok {
		return "", false
	}
	for d, dk := range depKeys {
		if k.keys[d] != dk {
			return "", false
		}
	}
	return key, true
}

// wrote stops the taking of keys: the run wrote a file, which may be an input of a later task.
func (k *handedKeys) wrote() {
	if k != nil {
		k.off.Store(true)
	}
}

// wrong stops the taking of keys after the handed key of a task differed from its files'; it
// reports whether this was the first.
func (k *handedKeys) wrong() (first bool) {
	if k == nil {
		return false
	}
	k.off.Store(true)
	k.wrongOnce.Do(func() { first = true })
	return first
}

// shortKey is the first 12 digits of a key, as vx shows it.
func shortKey(k string) string { return k[:min(len(k), 12)] }

// handedBeforeOpen answers, for a run of nodes handed what is known (Options.Known, not nil),
// the handed keys of its cached tasks that may be taken (no --force, no --sandbox-agent), for
// their entries to be read before the run, and what the server knew of the index for them while
// the state folder still stamps as it did then. It runs before the index is opened, which may
// create its WAL.
func handedBeforeOpen(opts Options, nodes []*node) (keys []string, index *handoff.Index) {
	known := opts.Known
	if len(known.Keys) == 0 || opts.Force || opts.Sandbox.Agent {
		return nil, nil
	}
	keys = make([]string, 0, len(nodes))
	for _, n := range nodes {
		if k, ok := known.Keys[n.task.ID]; ok && n.task.Cache {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	return keys, known.Index.Current(opts.Workspace.CacheDir, opts.Workspace.SharedDir)
}

// intactFunc answers isIntact as the cache asks it, nil when nothing was handed as intact.
func (k *handedKeys) intactFunc() func(id string, e store.Entry) (int, bool) {
	if k == nil || len(k.intact) == 0 {
		return nil
	}
	return k.isIntact
}
