package hasher

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/vzn/vx/engine/counters"
	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
)

// What git answered early (StartEarly) answers a hasher of that root and state folder, in place
// of its own git calls, for the first listing only and before any task wrote: a listing taken
// after a task wrote, a hasher of another state folder and one given a watcher's file state ask
// for themselves. The index is taken early only when asked for.
func TestEarlyAnswersTheFirstListingOnly(t *testing.T) {
	root := t.TempDir()
	write(t, root, "packages/a/src/x.ts", "x")
	gitRepo(t, root)
	stateDir := filepath.Join(root, ".vx")
	ws := &graph.Workspace{Root: root, CacheDir: stateDir, Projects: []*graph.Project{
		{Name: "a", Dir: "packages/a", AbsDir: filepath.Join(root, "packages/a")},
	}}
	p := ws.Projects[0]
	early := StartEarly(context.Background(), root, stateDir, true)
	early.Wait()
	// Written after git answered: only a hasher that asks git itself sees it.
	write(t, root, "packages/a/src/late.ts", "l")

	listing := func(h *Hasher) (files []string, spawned int) {
		t.Helper()
		count := &counters.Counters{}
		files, err := h.projectFiles(counters.With(context.Background(), count), p)
		if err != nil {
			t.Fatal(err)
		}
		return files, int(count.Counts().ProcessesSpawned)
	}
	h := New(Options{Workspace: ws, Early: early})
	defer h.Close()
	if files, spawned := listing(h); !slices.Equal(files, []string{"src/x.ts"}) || spawned != 0 {
		t.Fatalf("first listing %v with %d processes: want git's early answer and none", files, spawned)
	}
	count := &counters.Counters{}
	g, err := h.gitState(counters.With(context.Background(), count))
	if err != nil || !g.inGit || g.index.Entries["packages/a/src/x.ts"].ID == "" || count.Counts().ProcessesSpawned != 0 {
		t.Fatalf("index %+v, %v, %d processes: want the early one", g, err, count.Counts().ProcessesSpawned)
	}
	h.Invalidate(p.Dir)
	if files, _ := listing(h); !slices.Contains(files, "src/late.ts") {
		t.Fatalf("listing after a write %v: the early answer was taken again", files)
	}

	// A project first listed once a task (of another project) wrote files.
	afterWrite := New(Options{Workspace: ws, Early: early})
	afterWrite.Invalidate("packages/b")
	if files, _ := listing(afterWrite); !slices.Contains(files, "src/late.ts") {
		t.Fatalf("first listing after a write %v: want the hasher's own", files)
	}
	afterWrite.Close()

	for name, opts := range map[string]Options{
		"another state folder": {Workspace: &graph.Workspace{Root: root, CacheDir: filepath.Join(root, ".other"), Projects: ws.Projects}, Early: early},
		"a watcher's files":    {Workspace: ws, Early: early, Files: filestate.NewScan(root, stateDir)},
	} {
		other := New(opts)
		if files, _ := listing(other); !slices.Contains(files, "src/late.ts") {
			t.Errorf("%s: listing %v, want its own", name, files)
		}
		other.Close()
	}

	noIndex := StartEarly(context.Background(), root, stateDir, false)
	noIndex.Wait()
	h2 := New(Options{Workspace: ws, Early: noIndex})
	defer h2.Close()
	count = &counters.Counters{}
	if _, err := h2.gitState(counters.With(context.Background(), count)); err != nil || count.Counts().ProcessesSpawned == 0 {
		t.Fatalf("an early answer without the index: %v, %d processes; want the hasher to read it", err, count.Counts().ProcessesSpawned)
	}
}
