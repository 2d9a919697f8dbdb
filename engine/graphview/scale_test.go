package graphview_test

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/vzn/vx/engine/graphview"
	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/store"
)

// scaleProjects is the size the pages must stay usable at: 1,000 projects, 3,000 tasks.
const scaleProjects = 1000

// Both pages at 1,000 generated projects (3,000 tasks), in a real browser offline: every task
// drawn, the critical path marked, a click shows a command, a search finds a task. How long each
// page took to draw is logged (docs/performance.md has the figures), not asserted.
func TestPagesAtScale(t *testing.T) {
	ctx := browser(t)
	dir := largeWorkspace(t, scaleProjects)
	began := time.Now()
	g := build(t, dir, request())
	built := time.Since(began)
	if len(g.Tasks) != 3*scaleProjects {
		t.Fatalf("%d tasks, want %d", len(g.Tasks), 3*scaleProjects)
	}
	path := writeGraphPage(t, g)
	p, took := open(t, ctx, path)
	info, _ := os.Stat(path)
	t.Logf("graph of %d tasks, %d edges, %d layers: built in %v, a page of %d KiB drawn in %v", len(g.Tasks), len(g.Edges),
		g.Layers, built.Round(time.Millisecond), info.Size()>>10, took.Round(time.Millisecond))
	checkGraphPage(t, p, g, g.CriticalPath[len(g.CriticalPath)-1], "p0500#test")
	p.screenshot(t, "graph-1000") // found by the search: centred, its details open
	p.check(t)

	st := seedRun(t, filepath.Join(t.TempDir(), ".vx"), g)
	r, err := graphview.RunTimeline(context.Background(), st, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	path = writeRunPage(t, r)
	p, took = open(t, ctx, path)
	info, _ = os.Stat(path)
	t.Logf("run of %d tasks on %d lanes: a page of %d KiB drawn in %v", len(r.Tasks), r.Lanes, info.Size()>>10,
		took.Round(time.Millisecond))
	p.screenshot(t, "run-1000")
	failed := ""
	for _, b := range r.Tasks {
		if b.Status == store.StatusFailed {
			failed = b.TaskID
			break
		}
	}
	checkRunPage(t, p, r, failed, "p0500#test")
	p.check(t)
}

// seedRun records, straight into a new index at dir, a run of g's tasks as an eight-worker
// scheduler would have run them (each task once its dependencies ended, durations drawn at
// random; most tasks hit, a few builds fail and block what depends on them), with each task's
// manifest, and answers the index.
func seedRun(t *testing.T, dir string, g *graphview.Graph) *store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rng := rand.New(rand.NewPCG(3, 4))
	start := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	runID := store.NewRunID(start)
	if err := st.BeginRun(ctx, store.Run{ID: runID, Started: start, Args: []string{"run", "--all"}, TaskCount: len(g.Tasks),
		Concurrency: 8}); err != nil {
		t.Fatal(err)
	}
	workers := make([]time.Time, 8)
	ended := map[string]time.Time{}
	failed := map[string]string{}
	var b store.Batch
	for i, n := range g.Tasks { // in dependency order
		e := store.Execution{RunID: runID, TaskID: n.ID, Project: n.Project, Task: n.Task, Ord: i, Hash: key(n.ID)}
		ready := start
		for _, d := range n.DependsOn {
			ready = later(ready, ended[d])
			if root, ok := failed[d]; ok {
				e.Status, e.BlockedBy = store.StatusBlocked, root
			}
		}
		if e.Status == store.StatusBlocked {
			e.Started, e.Hash = ready, ""
			failed[n.ID] = e.BlockedBy
			b.Executions = append(b.Executions, e)
			continue
		}
		w := 0 // the worker free first
		for k, at := range workers {
			if at.Before(workers[w]) {
				w = k
			}
		}
		e.Started = later(ready, workers[w])
		e.Status, e.CacheSource, e.Duration = store.StatusHit, "local", time.Duration(5+rng.IntN(30))*time.Millisecond
		switch {
		case n.Task == "build" && rng.IntN(400) == 0:
			e.Status, e.CacheSource, e.ExitCode, e.Duration = store.StatusFailed, "", ptr(2), time.Duration(300+rng.IntN(900))*time.Millisecond
			failed[n.ID] = n.ID
			blob, err := st.CAS().Put(fmt.Appendf(nil, "%s: error TS2322: Type 'string' is not assignable to type 'number'.\n", n.ID))
			if err != nil {
				t.Fatal(err)
			}
			e.LogBlob, e.LogSource = blob, "failure"
		case rng.IntN(5) == 0:
			e.Status, e.CacheSource, e.ExitCode, e.Duration = store.StatusMiss, "", ptr(0), time.Duration(200+rng.IntN(2500))*time.Millisecond
		}
		workers[w] = e.Started.Add(e.Duration)
		ended[n.ID] = workers[w]
		deps := map[string]string{}
		for _, d := range n.DependsOn {
			deps[d] = key(d)
		}
		manifest, err := json.Marshal(hasher.Manifest{TaskID: n.ID, Command: n.Command, Deps: deps})
		if err != nil {
			t.Fatal(err)
		}
		b.Executions = append(b.Executions, e)
		b.Manifests = append(b.Manifests, store.ManifestRow{Hash: e.Hash, TaskID: n.ID, Manifest: manifest})
	}
	if err := st.Record(ctx, b); err != nil {
		t.Fatal(err)
	}
	end := slices.MaxFunc(workers, func(a, b time.Time) int { return cmp.Compare(a.UnixNano(), b.UnixNano()) })
	if err := st.FinishRun(ctx, runID, store.RunFailed, 1, end); err != nil {
		t.Fatal(err)
	}
	return st
}

func key(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func ptr[T any](v T) *T { return &v }
