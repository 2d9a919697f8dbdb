package watch

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/hasher"
)

// TestSnapshotDigestsKeyWithoutReading: the watcher records each LF file's key digest (its git
// blob id) beside its hash, none for a CRLF file, and a hasher over its snapshot keys a task
// whose files are all modified by stat without opening one of them.
func TestSnapshotDigestsKeyWithoutReading(t *testing.T) {
	files := map[string]string{
		".gitignore":              ".vx/\n",
		"packages/a/package.json": `{"name":"a"}` + "\n",
		"packages/a/src/index.js": "export const a = 1\n",
		"packages/a/src/win.js":   "export const w = 1\r\n",
	}
	root := repo(t, files)
	later := time.Now().Add(time.Hour)
	for rel := range files {
		if err := os.Chtimes(filepath.Join(root, rel), later, later); err != nil {
			t.Fatal(err)
		}
	}
	w := start(t, root, nil)
	ids := map[string]string{}
	for rel, content := range files {
		cmd := exec.Command("git", "hash-object", "--stdin")
		cmd.Dir, cmd.Stdin = root, strings.NewReader(content)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		ids[rel] = strings.TrimSpace(string(out))
	}
	var snap *filestate.Snapshot
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		snap = snapshot(t, w)
		hashed := 0
		for rel := range files {
			if fi, err := snap.Lstat(rel); err == nil && filestate.InfoOf(fi).Hash != "" {
				hashed++
			}
		}
		if hashed == len(files) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the watcher never hashed every file")
		}
	}
	for rel := range files {
		fi, _ := snap.Lstat(rel)
		digest, want := filestate.InfoOf(fi).Digest, "sha1:"+ids[rel]
		if strings.HasSuffix(rel, "win.js") {
			want = "" // CRLF: the line-ending rule decides, which the hasher applies
		}
		if digest != want {
			t.Fatalf("%s: digest %q, want %q", rel, digest, want)
		}
	}
	ws := &graph.Workspace{Root: root, CacheDir: filepath.Join(root, ".vx"), Projects: []*graph.Project{
		{Name: "a", Dir: "packages/a", AbsDir: filepath.Join(root, "packages/a")}}}
	ws.Index()
	p, _ := ws.Project("a")
	h := hasher.New(hasher.Options{Workspace: ws, Files: snap, Salt: []byte("s")})
	task := &graph.Task{ID: "a#build", Command: "build", Inputs: []string{"package.json", "src/index.js"}}
	m, err := h.Manifest(context.Background(), p, task, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := h.FilesOpened(); n != 0 {
		t.Fatalf("the hasher opened %d files the watcher had digests of", n)
	}
	if m.Files["src/index.js"] != ids["packages/a/src/index.js"] || m.Files["package.json"] != ids["packages/a/package.json"] {
		t.Fatalf("digests %v, want git's ids", m.Files)
	}
}
