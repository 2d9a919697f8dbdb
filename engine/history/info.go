package history

import (
	"context"
	"fmt"
	"time"

	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/store"
)

// CacheInfo is vx info's cache section: the versions this vx reads and writes, and the state of the
// state folder.
type CacheInfo struct {
	// CacheVersion enters every cache key; SchemaVersion is the index layout.
	CacheVersion  string `json:"cacheVersion"`
	SchemaVersion int    `json:"schemaVersion"`
	// State is absent (no index yet), ok, otherVersion (refused until the next vx run upgrades or resets it) or
	// unreadable; FoundVersion is the schema version on disk.
	State        string `json:"state"`
	FoundVersion string `json:"foundVersion,omitempty"`
	Dir          string `json:"dir"`
	Error        string `json:"error,omitempty"`
	// Entries and TotalBytes count the cache when the state is ok.
	Entries    int   `json:"entries"`
	TotalBytes int64 `json:"totalBytes"`
	Runs       int   `json:"runs"`
}

// InfoCache answers vx info's cache section for the state folder dir, creating nothing.
func InfoCache(ctx context.Context, dir string) (*CacheInfo, error) {
	s := store.Inspect(ctx, dir)
	out := &CacheInfo{CacheVersion: hasher.CacheVersion, SchemaVersion: store.SchemaVersion, State: s.State,
		FoundVersion: s.FoundVersion, Dir: dir, Error: s.Error}
	if s.State != "ok" {
		return out, nil
	}
	st, err := store.OpenReadOnly(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("read the state folder: %w", err)
	}
	defer st.Close()
	if out.Entries, out.TotalBytes, err = st.CacheTotals(ctx, ""); err != nil {
		return nil, err
	}
	if out.Runs, err = st.CountRuns(ctx, time.Unix(0, 0)); err != nil {
		return nil, err
	}
	return out, nil
}

// InfoFlaky answers vx info's flaky tasks for the state folder dir (none when there is no index),
// creating nothing; an index of another version is an error naming it.
func InfoFlaky(ctx context.Context, dir string) ([]string, error) {
	st, err := store.OpenReadOnly(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return FlakyTasks(ctx, st)
}
