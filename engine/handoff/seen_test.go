package handoff

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/vzn/vx/engine/graph"
)

// seenWorkspace writes a workspace of n projects, each with a build task whose outputs are
// dist/** holding files files, and answers it.
func seenWorkspace(t testing.TB, n, files int) *graph.Workspace {
	root := t.TempDir()
	ws := &graph.Workspace{Root: root, CacheDir: filepath.Join(root, ".vx")}
	for i := range n {
		name := fmt.Sprintf("p%d", i)
		p := &graph.Project{Name: name, Dir: "packages/" + name, Tasks: map[string]*graph.Task{}}
		p.Tasks["build"] = &graph.Task{ID: name + "#build", Project: name, Name: "build", Cache: true, Outputs: []string{"dist/**"}}
		ws.Projects = append(ws.Projects, p)
		dist := filepath.Join(root, "packages", name, "dist", "deep")
		if err := os.MkdirAll(dist, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := range files {
			if err := os.WriteFile(filepath.Join(dist, fmt.Sprintf("f%d.js", f)), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	ws.Index()
	return ws
}

// seenOnDisk answers the intact hits of every task of ws as the disk shows their outputs now.
func seenOnDisk(t testing.TB, ws *graph.Workspace) map[string]IntactHit {
	hits := map[string]IntactHit{}
	for _, id := range ws.TaskIDs() {
		task, _ := ws.Task(id)
		seen, err := OutputsSeen(diskTree{ws.Root}, []string{"packages/" + task.Project + "/dist"})
		if err != nil {
			t.Fatal(err)
		}
		hits[id] = IntactHit{Seen: seen}
	}
	return hits
}

// StaleIntact names a task whose outputs changed since they were seen (a file written in place,
// one added, one removed, a folder added), and none while they are as seen.
func TestStaleIntact(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(dist string) error
	}{
		{"written", func(dist string) error { return os.WriteFile(filepath.Join(dist, "deep/f0.js"), []byte("y"), 0o644) }},
		{"added", func(dist string) error { return os.WriteFile(filepath.Join(dist, "stray.js"), nil, 0o644) }},
		{"removed", func(dist string) error { return os.Remove(filepath.Join(dist, "deep/f1.js")) }},
		{"a folder added", func(dist string) error { return os.Mkdir(filepath.Join(dist, "new"), 0o755) }},
		{"all removed", func(dist string) error { return os.RemoveAll(dist) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := seenWorkspace(t, 3, 2)
			hits := seenOnDisk(t, ws)
			if id := StaleIntact(ws, hits); id != "" {
				t.Fatalf("%s is stale before any change", id)
			}
			if err := tc.change(filepath.Join(ws.Root, "packages/p1/dist")); err != nil {
				t.Fatal(err)
			}
			if id := StaleIntact(ws, hits); id != "p1#build" {
				t.Errorf("stale: %q, want p1#build", id)
			}
		})
	}
}

// BenchmarkStaleIntact is the child's look at the outputs of 1,000 intact hits, each of 5 files
// in two folders.
func BenchmarkStaleIntact(b *testing.B) {
	ws := seenWorkspace(b, 1000, 5)
	hits := seenOnDisk(b, ws)
	for b.Loop() {
		if id := StaleIntact(ws, hits); id != "" {
			b.Fatal(id)
		}
	}
}

// BenchmarkLstatBaseline is os.Lstat of as many paths as BenchmarkStaleIntact looks at, to
// read its figure against the machine's.
func BenchmarkLstatBaseline(b *testing.B) {
	ws := seenWorkspace(b, 1000, 5)
	var paths []string
	for i := range 1000 {
		dist := filepath.Join(ws.Root, "packages", fmt.Sprintf("p%d", i), "dist")
		paths = append(paths, dist, filepath.Join(dist, "deep"))
		for f := range 5 {
			paths = append(paths, filepath.Join(dist, "deep", fmt.Sprintf("f%d.js", f)))
		}
	}
	for b.Loop() {
		for _, p := range paths {
			if _, err := os.Lstat(p); err != nil {
				b.Fatal(err)
			}
		}
	}
}
