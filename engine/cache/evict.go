package cache

import (
	"context"

	"github.com/vzn/vx/engine/store"
)

// Evict removes entries from st's index, then the blobs that no entry or failure log of the
// history still names, then the orphan files listed (blobs nothing named, leftover temporary
// files) that nothing names now. The entries go first: a blob is removed only once nothing names
// it, so a crash part way leaves orphans for the next prune, never an entry without its blobs.
func Evict(ctx context.Context, st *store.Store, entries []store.Entry, orphans []store.BlobInfo) error {
	if len(entries) > 0 {
		hashes := make([]string, len(entries))
		for i, e := range entries {
			hashes[i] = e.Hash
		}
		if err := st.DeleteEntries(ctx, hashes); err != nil {
			return err
		}
	}
	refs, err := st.ReferencedBlobs(ctx)
	if err != nil {
		return err
	}
	for _, e := range entries {
		for _, h := range []string{e.OutputsBlob, e.LogBlob} {
			if h != "" && !refs[h] {
				if err := st.CAS().Remove(h); err != nil {
					return err
				}
			}
		}
	}
	for _, b := range orphans {
		if !refs[b.Name] {
			if err := st.CAS().RemoveFile(b); err != nil {
				return err
			}
		}
	}
	return nil
}
