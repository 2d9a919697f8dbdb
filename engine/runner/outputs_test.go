package runner

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/vzn/vx/engine/graph"
)

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

// An output folder that is a symlink is cached as the symlink, and a hit brings the link back.
func TestSymlinkedOutputFolderRestored(t *testing.T) {
	f := newTrustFixture(t, "mkdir -p build && echo x > build/x.js && ln -sfn build out")
	f.p.Tasks["build"].Outputs = []string{"out/**"}
	f.runExpect("p#build=miss")
	out := filepath.Join(f.p.AbsDir, "out")
	if err := os.Remove(out); err != nil {
		t.Fatal(err)
	}
	f.runExpect("p#build=hit")
	if target, err := os.Readlink(out); err != nil || target != "build" {
		t.Errorf("out after the hit: %q %v", target, err)
	}
}

// Outputs whose names and link targets are long (past the 100 bytes of a tar header's field) or
// not ASCII are archived and restored whole.
func TestLongAndUnicodeOutputsRestored(t *testing.T) {
	long := strings.Repeat("very-long-folder-name/", 8) + "file-" + strings.Repeat("x", 120) + ".js"
	cmd := fmt.Sprintf("mkdir -p dist/%s && echo long > dist/%s && echo ü > 'dist/çà ü.txt' && ln -sfn %s dist/link",
		path.Dir(long), long, long)
	f := newTrustFixture(t, cmd) // its first run stored the outputs
	os.RemoveAll(filepath.Join(f.p.AbsDir, "dist"))
	f.runExpect("p#build=hit")
	for name, want := range map[string]string{long: "long\n", "çà ü.txt": "ü\n"} {
		if got, err := os.ReadFile(filepath.Join(f.p.AbsDir, "dist", name)); err != nil || string(got) != want {
			t.Errorf("%s: %q %v", name, got, err)
		}
	}
	if target, err := os.Readlink(filepath.Join(f.p.AbsDir, "dist/link")); err != nil || target != long {
		t.Errorf("link: %q %v", target, err)
	}
}
