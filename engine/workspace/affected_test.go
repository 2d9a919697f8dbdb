package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/graph"
)

// stateWorkspace is a committed git repository with a root project and apps/web, no .gitignore,
// whose state folder is cacheDir (relative to the root).
func stateWorkspace(t *testing.T, cacheDir string) *graph.Workspace {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{"package.json": `{"name": "root"}`, "apps/web/package.json": `{"name": "web"}`, "src/index.ts": "x"}
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	ws := &graph.Workspace{Root: root, CacheDir: filepath.Join(root, cacheDir)}
	for _, p := range []struct{ name, dir string }{{"root", "."}, {"web", "apps/web"}} {
		ws.Projects = append(ws.Projects, &graph.Project{Name: p.name, Dir: p.dir, AbsDir: filepath.Join(root, p.dir), Tasks: map[string]*graph.Task{}})
	}
	ws.Index()
	return ws
}

// writeState writes a file under the workspace's root, as vx writes its cache and history.
func writeState(t *testing.T, ws *graph.Workspace, rel string) {
	t.Helper()
	p := filepath.Join(ws.Root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("blob"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAffectedLeavesStateFolders: files vx writes into its state folders (.vx/cas/…, and a
// $VX_CACHE_DIR inside the workspace), untracked and not ignored, make no project affected —
// neither under --affected nor under a [REF] filter — while a source file still does.
func TestAffectedLeavesStateFolders(t *testing.T) {
	ws := stateWorkspace(t, "state")
	writeState(t, ws, ".vx/cas/ab/abcdef")
	writeState(t, ws, ".vx/runs.db")
	writeState(t, ws, "state/cas/cd/cdef01")

	got, _, err := affectedSince(context.Background(), ws, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("state files made projects affected: %v", got)
	}
	if sel, err := Select(context.Background(), ws, SelectOptions{All: true, Filters: []string{"[HEAD]"}}); err != nil || len(sel.Projects) != 0 {
		t.Errorf("[HEAD] filter over state files = %v (err %v), want no project", sel, err)
	}

	writeState(t, ws, "src/other.ts")
	writeState(t, ws, ".vxrc-not-state/x") // beside .vx, not inside it: the root project's file
	got, _, err = affectedSince(context.Background(), ws, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !strings.Contains(got["root"], "changed since HEAD") {
		t.Errorf("Affected = %v, want root only", got)
	}
}
