package cache

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
	"go.uber.org/goleak"

	"github.com/vzn/vx/engine/graph"
)

func TestMain(m *testing.M) {
	if root := os.Getenv(restoreHelperEnv); root != "" {
		restoreHelper(root) // a child of TestKilledRestoreIsRolledBack: it never returns
	}
	goleak.VerifyTestMain(m)
}

// fixture is a workspace made by hand: projects with tasks, files on disk.
type fixture struct {
	t    *testing.T
	root string
	ws   *graph.Workspace
}

func newFixture(t *testing.T) *fixture {
	root := t.TempDir()
	ws := &graph.Workspace{Root: root, CacheDir: filepath.Join(root, ".vx"), ConfigFile: "vx.workspace.ts"}
	return &fixture{t: t, root: root, ws: ws}
}

func (f *fixture) project(name string) *graph.Project {
	p := &graph.Project{Name: name, Dir: "packages/" + name, AbsDir: filepath.Join(f.root, "packages", name),
		Tasks: map[string]*graph.Task{}}
	if err := os.MkdirAll(p.AbsDir, 0o755); err != nil {
		f.t.Fatal(err)
	}
	f.ws.Projects = append(f.ws.Projects, p)
	return p
}

func (f *fixture) write(rel, content string) {
	path := filepath.Join(f.root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// The outputs on disk are listed alike whether a pattern is a whole folder (walked) or not (matched
// by doublestar): nested folders, a symlink to a folder (listed, never entered), a dangling one,
// negated patterns, .git left out. One difference is meant: where the folder itself is a symlink
// ("out" → "build"), the symlink is the output; doublestar listed the files through it, which no
// restore could write (never through a symlink), so that entry could never hit.
func TestListOutputsLikeTheGlob(t *testing.T) {
	f := newFixture(t)
	p := f.project("p")
	for _, rel := range []string{
		"packages/p/dist/a.js", "packages/p/dist/sub/b.js", "packages/p/dist/sub/deep/c.map", "packages/p/dist/ü x.txt",
		"packages/p/dist/.hidden", "packages/p/build/x.js", "packages/p/src/s.ts", "packages/p/dist/cache/skip.bin",
		"packages/other/o.js", "packages/p/.next/server/page.js", "packages/p/.git/config",
	} {
		f.write(rel, "x")
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink("../src", filepath.Join(p.AbsDir, "dist/srclink")))
	must(os.Symlink("nowhere", filepath.Join(p.AbsDir, "dist/dangling")))
	must(os.Symlink("build", filepath.Join(p.AbsDir, "out")))
	symlinked := &graph.Task{ID: "p#build", Project: "p", Name: "build", Outputs: []string{"out/**"}}
	if o, err := newOutputSet(f.ws, p, symlinked); err != nil {
		t.Fatal(err)
	} else if got, err := o.list(); err != nil || !slices.Equal(got, []string{"packages/p/out"}) {
		t.Errorf("a symlinked output folder: %v %v", got, err)
	}
	for _, outputs := range [][]string{
		{"dist/**"},
		{"dist/**", "!dist/cache/**"},
		{"dist/**", "build/**", "!**/*.map"},
		{".next/**", "!.next/cache/**"},
		{"missing/**"},
		{"//packages/other/**"},
		{"**"},
		{"dist/*.js", "dist/sub/**"},
	} {
		task := &graph.Task{ID: "p#build", Project: "p", Name: "build", Outputs: outputs}
		o, err := newOutputSet(f.ws, p, task)
		if err != nil {
			t.Fatal(err)
		}
		got, err := o.list()
		if err != nil {
			t.Fatalf("%v: %v", outputs, err)
		}
		// The reference: every positive pattern through doublestar, as list did before it walked.
		want := []string{}
		seen := map[string]bool{}
		for _, g := range o.globs {
			if g.Negated {
				continue
			}
			matches, err := doublestar.Glob(os.DirFS(f.root), g.FromRoot(p.Dir), doublestar.WithFilesOnly(), doublestar.WithNoFollow())
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range matches {
				if o.allowed(m) && !seen[m] {
					seen[m] = true
					want = append(want, m)
				}
			}
		}
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Errorf("%v:\n got %v\nwant %v", outputs, got, want)
		}
	}
}
