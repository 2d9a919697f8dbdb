package info

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/store"
)

// CacheReport is the cache section: where the state folder is, whether its index is absent, of
// this vx's version, or of another, and how much it holds.
type CacheReport struct {
	Dir string `json:"dir"`
	// State is "absent", "ok" or "other version".
	State         string `json:"state"`
	SchemaVersion int    `json:"schemaVersion"`
	Entries       int    `json:"entries"`
	TotalBytes    int64  `json:"totalBytes"`
	Note          string `json:"note,omitempty"`
}

// Summary renders the report on one line.
func (c CacheReport) Summary() string {
	switch c.State {
	case "ok":
		return fmt.Sprintf("%s: %d entries, %d KiB (index version %d)", c.Dir, c.Entries, c.TotalBytes>>10, c.SchemaVersion)
	case "absent":
		return fmt.Sprintf("%s: no index yet (the first vx run makes one)", c.Dir)
	}
	return fmt.Sprintf("%s: %s", c.Dir, c.Note)
}

// FlakyReport is the flakyTasks section: the tasks whose same cache key both passed and failed.
type FlakyReport struct {
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
	open := func(ctx context.Context) (*store.Store, *CacheReport, error) {
		rep := &CacheReport{Dir: cacheDir, State: "absent", SchemaVersion: store.SchemaVersion}
		if _, err := os.Stat(store.IndexPath(cacheDir)); errors.Is(err, os.ErrNotExist) {
			return nil, rep, nil
		}
		st, err := store.OpenReadOnly(ctx, cacheDir)
		var ve *store.VersionError
		if errors.As(err, &ve) {
			rep.State, rep.Note = "other version", ve.Error()
			return nil, rep, nil
		}
		if err != nil {
			return nil, nil, err
		}
		rep.State = "ok"
		return st, rep, nil
	}
	cache = func(ctx context.Context, _ *graph.Workspace) (any, error) {
		st, rep, err := open(ctx)
		if err != nil || st == nil {
			return rep, err
		}
		defer st.Close()
		stats, err := history.Cache(ctx, st, "", time.Now())
		if err != nil {
			return nil, err
		}
		rep.Entries, rep.TotalBytes = stats.Entries, stats.TotalBytes
		return rep, nil
	}
	flaky = func(ctx context.Context, _ *graph.Workspace) (any, error) {
		st, rep, err := open(ctx)
		if err != nil {
			return nil, err
		}
		if st == nil {
			if rep.State != "absent" {
				return nil, errors.New(rep.Note)
			}
			return FlakyReport{Tasks: []string{}}, nil
		}
		defer st.Close()
		tasks, err := history.FlakyTasks(ctx, st)
		if err != nil {
			return nil, err
		}
		if tasks == nil {
			tasks = []string{}
		}
		return FlakyReport{Tasks: tasks}, nil
	}
	return cache, flaky
}
