package hasher

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/counters"
	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
)

// gitShows answers what `git ls-files -c -o --exclude-standard` shows under dir of root, relative
// to dir, leaving out the tracked files that are gone (as a listing's reader drops them).
func gitShows(t *testing.T, root, dir string) []string {
	t.Helper()
	files, err := filestate.LsFiles(context.Background(), filepath.Join(root, dir), filepath.Join(root, ".vx"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if _, err := os.Lstat(filepath.Join(root, dir, f)); err == nil {
			out = append(out, f)
		}
	}
	return out
}

// A project whose task ran is listed again by a walk of its folder and git's exclude rules, and
// the walk answers what git's listing answers, whatever the task did: new files shown, hidden by
// a pattern, by an ignored folder at any depth or re-included by a negation; a tracked file inside
// an ignored folder kept and a new one beside it hidden; a tracked file removed; links; an
// ignored node_modules of hundreds of files. The walk starts no process of its own (the one
// checker at most).
func TestRelistWalkAnswersWhatGitShows(t *testing.T) {
	root := t.TempDir()
	write(t, root, ".gitignore", "dist/\n*.log\n**/gen/*\n!**/gen/keep.txt\nnode_modules/\n.vx/\n")
	write(t, root, "packages/a/src/x.ts", "x")
	write(t, root, "packages/a/src/old.ts", "o")
	write(t, root, "packages/a/README.md", "r")
	write(t, root, "packages/b/src/y.ts", "y")
	gitRepo(t, root)
	// A file forced into git inside a folder git ignores.
	write(t, root, "packages/a/dist/tracked.js", "t")
	if out, err := exec.Command("git", "-C", root, "add", "-f", "packages/a/dist/tracked.js").CombinedOutput(); err != nil {
		t.Fatalf("git add -f: %v %s", err, out)
	}
	ws := &graph.Workspace{Root: root, CacheDir: filepath.Join(root, ".vx"), Projects: []*graph.Project{
		{Name: "a", Dir: "packages/a", AbsDir: filepath.Join(root, "packages/a")},
		{Name: "b", Dir: "packages/b", AbsDir: filepath.Join(root, "packages/b")},
	}}
	count := &counters.Counters{}
	ctx := counters.With(context.Background(), count)
	h := New(Options{Workspace: ws})
	defer h.Close()
	p := ws.Projects[0]
	listed, err := h.projectFiles(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if want := gitShows(t, root, "packages/a"); !reflect.DeepEqual(listed, want) {
		t.Fatalf("first listing %v, git shows %v", listed, want)
	}

	// What a task's command does to its project.
	h.Invalidate(p.Dir)
	for rel, content := range map[string]string{
		"packages/a/src/new.ts":             "n",
		"packages/a/src/deep/er/most.ts":    "m",
		"packages/a/out.log":                "l",
		"packages/a/src/gen/made.ts":        "g",
		"packages/a/src/gen/keep.txt":       "k",
		"packages/a/dist/index.js":          "d",
		"packages/a/dist/sub/chunk.js":      "c",
		"packages/a/fresh/dir/visible.json": "v",
	} {
		write(t, root, rel, content)
	}
	for i := range 300 {
		write(t, root, "packages/a/node_modules/pkg"+strings.Repeat("x", i%7)+"/f"+string(rune('a'+i%26))+".js", "m")
	}
	if err := os.Remove(filepath.Join(root, "packages/a/src/old.ts")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("src/x.ts", filepath.Join(root, "packages/a/link.ts")); err != nil {
		t.Fatal(err)
	}
	spawned := count.Counts().ProcessesSpawned
	walked, ok := h.relistWalk(ctx, p.Dir, listed)
	if !ok {
		t.Fatal("the walk did not vouch for a project it can list")
	}
	if want := gitShows(t, root, "packages/a"); !reflect.DeepEqual(walked, want) {
		t.Fatalf("walked %v, git shows %v", walked, want)
	}
	if got := count.Counts().ProcessesSpawned - spawned; got > 1 {
		t.Errorf("the walk started %d processes, want at most the one checker", got)
	}
	// Through the hasher: the project's next listing is the walk's.
	if files, err := h.projectFiles(ctx, p); err != nil || !reflect.DeepEqual(files, walked) {
		t.Fatalf("projectFiles after the task %v (%v), want %v", files, err, walked)
	}
}

// Where the walk cannot vouch for its answer it says so, and git lists the project: a new
// exclude file, a changed one, a repository inside the project, the root project, a project with
// a project nested in it.
func TestRelistWalkDefersToGit(t *testing.T) {
	root := t.TempDir()
	write(t, root, ".gitignore", ".vx/\n")
	write(t, root, "packages/a/src/x.ts", "x")
	write(t, root, "packages/a/.gitignore", "*.tmp\n")
	write(t, root, "packages/outer/inner/src/y.ts", "y")
	gitRepo(t, root)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(root, "packages/a/.gitignore"), old, old); err != nil {
		t.Fatal(err)
	}
	ws := &graph.Workspace{Root: root, CacheDir: filepath.Join(root, ".vx"), Projects: []*graph.Project{
		{Name: "root", Dir: ".", AbsDir: root},
		{Name: "a", Dir: "packages/a", AbsDir: filepath.Join(root, "packages/a")},
		{Name: "outer", Dir: "packages/outer", AbsDir: filepath.Join(root, "packages/outer")},
		{Name: "inner", Dir: "packages/outer/inner", AbsDir: filepath.Join(root, "packages/outer/inner")},
	}}
	h := New(Options{Workspace: ws})
	defer h.Close()
	ctx := context.Background()
	listing := func(dir string) []string {
		t.Helper()
		return gitShows(t, root, dir)
	}
	if _, ok := h.relistWalk(ctx, "packages/a", listing("packages/a")); !ok {
		t.Fatal("an unchanged project was not walked")
	}
	for what, check := range map[string]func() bool{
		"the root project": func() bool { _, ok := h.relistWalk(ctx, ".", listing(".")); return ok },
		"a project holding another": func() bool {
			_, ok := h.relistWalk(ctx, "packages/outer", listing("packages/outer"))
			return ok
		},
		"a changed .gitignore": func() bool {
			before := listing("packages/a")
			write(t, root, "packages/a/.gitignore", "*.tmp\n*.ts\n")
			defer func() {
				write(t, root, "packages/a/.gitignore", "*.tmp\n")
				_ = os.Chtimes(filepath.Join(root, "packages/a/.gitignore"), old, old)
			}()
			_, ok := h.relistWalk(ctx, "packages/a", before)
			return ok
		},
		"a new .gitignore": func() bool {
			before := listing("packages/a")
			write(t, root, "packages/a/src/.gitignore", "x.ts\n")
			defer os.Remove(filepath.Join(root, "packages/a/src/.gitignore"))
			_, ok := h.relistWalk(ctx, "packages/a", before)
			return ok
		},
		"a repository inside": func() bool {
			before := listing("packages/a")
			write(t, root, "packages/a/vendor/lib/README", "v")
			if out, err := exec.Command("git", "-C", filepath.Join(root, "packages/a/vendor/lib"), "init", "-q").CombinedOutput(); err != nil {
				t.Fatalf("git init: %v %s", err, out)
			}
			defer os.RemoveAll(filepath.Join(root, "packages/a/vendor"))
			_, ok := h.relistWalk(ctx, "packages/a", before)
			return ok
		},
	} {
		if check() {
			t.Errorf("%s: the walk vouched for its listing", what)
		}
	}
}
