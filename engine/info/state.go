package info

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/prune"
	"github.com/vzn/vx/engine/statedirs"
	"github.com/vzn/vx/engine/store"
)

// cacheFacts answers the store's orphan blobs (as a dry vx cache prune finds them) and the hits
// of the last 24 hours that restored output files, read-only, from a checkout's state folder and
// the shared store.
func cacheFacts(ctx context.Context, checkout, shared string) (Orphans, int, error) {
	st, err := store.OpenReadOnlyShared(ctx, checkout, shared)
	if err != nil {
		return Orphans{}, 0, err
	}
	defer st.Close()
	res, err := prune.Prune(ctx, st, prune.Options{DryRun: true})
	if err != nil {
		return Orphans{}, 0, fmt.Errorf("count orphan blobs: %w", err)
	}
	restored, err := st.RestoredSince(ctx, time.Now().Add(-24*time.Hour))
	if err != nil {
		return Orphans{}, 0, err
	}
	return Orphans{Artifacts: res.Orphans, Bytes: res.OrphanBytes}, restored, nil
}

// cacheReport is the cache section: the history's answer, with a one-line summary for text, and
// the orphan blobs and restoring hits the original's facts count.
type cacheReport struct {
	*history.CacheInfo
	orphans     Orphans
	restored24h int
}

// Summary renders the report on one line.
func (c cacheReport) Summary() string {
	switch c.State {
	case "ok", "absent":
		shared := fmt.Sprintf("shared store %s (%s): %d entries, %d KiB", c.SharedDir, c.SharedDirSource, c.Entries, c.TotalBytes>>10)
		if c.SharedState != "ok" && c.SharedState != "absent" {
			shared = fmt.Sprintf("shared store %s (%s): %s %s", c.SharedDir, c.SharedDirSource, c.SharedState, c.SharedError)
		}
		own := fmt.Sprintf("%s (%s): %d runs", c.Dir, c.DirSource, c.Runs)
		if c.State == "absent" {
			own = fmt.Sprintf("%s (%s): no index yet (the first vx run makes one)", c.Dir, c.DirSource)
		}
		line := fmt.Sprintf("%s; history %s (cache version %s, index version %d)", shared, own, c.CacheVersion, c.SchemaVersion)
		for _, n := range c.Notes {
			line += "; " + n
		}
		return line
	}
	return fmt.Sprintf("%s: %s %s", c.Dir, c.State, c.Error)
}

// FlakyReport is the flakyTasks section: the tasks whose same cache key both passed and failed.
type FlakyReport struct {
	// Count is how many tasks are flaky, however many a list of them shows.
	Count int      `json:"count"`
	Tasks []string `json:"tasks"`
	// counts are the flaky tasks with their keys, passes and failures (the original's list).
	counts []store.FlakyCount
}

// Summary renders the report on one line.
func (f FlakyReport) Summary() string {
	if len(f.Tasks) == 0 {
		return "none seen"
	}
	return strings.Join(f.Tasks, ", ")
}

// stateSections fill the cache and flakyTasks sections from the index, read-only: info never
// creates the state folder.
func stateSections(dirs statedirs.Dirs, getenv func(string) string) (cache, flaky func(context.Context, *graph.Workspace) (any, error)) {
	cacheDir := dirs.Checkout
	cache = func(ctx context.Context, _ *graph.Workspace) (any, error) {
		c, err := history.InfoCache(ctx, dirs, getenv)
		if err != nil {
			return nil, err
		}
		r := cacheReport{CacheInfo: c}
		if (c.State == "ok" || c.State == "absent") && c.SharedState == "ok" {
			if r.orphans, r.restored24h, err = cacheFacts(ctx, dirs.Checkout, c.SharedDir); err != nil {
				return nil, err
			}
		}
		return r, nil
	}
	flaky = func(ctx context.Context, _ *graph.Workspace) (any, error) {
		tasks, counts, err := history.InfoFlaky(ctx, cacheDir)
		if err != nil {
			return nil, err
		}
		return FlakyReport{Count: len(tasks), Tasks: tasks, counts: counts}, nil
	}
	return cache, flaky
}
