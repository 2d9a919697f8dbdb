package info

import (
	"context"
	"fmt"
	"strings"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/history"
)

// cacheReport is the cache section: the history's answer, with a one-line summary for text.
type cacheReport struct{ *history.CacheInfo }

// Summary renders the report on one line.
func (c cacheReport) Summary() string {
	switch c.State {
	case "ok":
		return fmt.Sprintf("%s: %d entries, %d KiB, %d runs (cache version %s, index version %d)",
			c.Dir, c.Entries, c.TotalBytes>>10, c.Runs, c.CacheVersion, c.SchemaVersion)
	case "absent":
		return fmt.Sprintf("%s: no index yet (the first vx run makes one)", c.Dir)
	}
	return fmt.Sprintf("%s: %s %s", c.Dir, c.State, c.Error)
}

// FlakyReport is the flakyTasks section: the tasks whose same cache key both passed and failed.
type FlakyReport struct {
	// Count is how many tasks are flaky, however many a list of them shows.
	Count int      `json:"count"`
	Tasks []string `json:"tasks"`
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
func stateSections(cacheDir string) (cache, flaky func(context.Context, *graph.Workspace) (any, error)) {
	cache = func(ctx context.Context, _ *graph.Workspace) (any, error) {
		c, err := history.InfoCache(ctx, cacheDir)
		if err != nil {
			return nil, err
		}
		return cacheReport{c}, nil
	}
	flaky = func(ctx context.Context, _ *graph.Workspace) (any, error) {
		tasks, err := history.InfoFlaky(ctx, cacheDir)
		if err != nil {
			return nil, err
		}
		if tasks == nil {
			tasks = []string{}
		}
		return FlakyReport{Count: len(tasks), Tasks: tasks}, nil
	}
	return cache, flaky
}
