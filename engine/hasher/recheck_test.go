package hasher

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/vzn/vx/engine/graph"
)

// TestRecheck: after a key is made, Recheck names each input that was edited, removed or added
// in the inputs' folders, or outside them through a "//" glob, and nothing when none moved; a file
// that is not an input (an output, one the globs do not match) moves nothing.
func TestRecheck(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write(t, root, "packages/a/src/in.txt", "v2")
	write(t, root, "packages/a/src/sub/deep.txt", "d")
	write(t, root, "packages/a/README.md", "r")
	write(t, root, "config/rules.json", "{}")
	age(t, root)
	p := &graph.Project{Name: "a", Dir: "packages/a", AbsDir: filepath.Join(root, "packages/a")}
	task := &graph.Task{ID: "a#build", Inputs: []string{"src/**", "//config/**"}, Outputs: []string{"dist/**"}}
	ws := &graph.Workspace{Root: root, CacheDir: filepath.Join(root, ".vx"), Projects: []*graph.Project{p}}
	ws.Index()
	// Each case keys the files as the cases before it left them.
	recheck := func(t *testing.T, edit func()) []string {
		t.Helper()
		h := New(Options{Workspace: ws})
		m, err := h.Manifest(ctx, p, task, nil)
		if err != nil {
			t.Fatal(err)
		}
		h.StatFolders(p, m.Inputs)
		if m.Inputs.Len() < 3 {
			t.Fatalf("the key's stats hold %d files, want every input", m.Inputs.Len())
		}
		edit()
		h.Invalidate(p.Dir) // as the runner does once a command ran
		moved, err := h.Recheck(ctx, p, task, m.Inputs)
		if err != nil {
			t.Fatal(err)
		}
		return moved
	}
	for _, tc := range []struct {
		name string
		edit func()
		want []string
	}{
		{"nothing", func() {}, nil},
		{"an output and a file no glob matches", func() {
			write(t, root, "packages/a/dist/out.txt", "o")
			write(t, root, "packages/a/notes.txt", "n")
		}, nil},
		{"an edit", func() { write(t, root, "packages/a/src/in.txt", "v3") }, []string{"src/in.txt"}},
		{"an edit outside the project", func() { write(t, root, "config/rules.json", "{ }") }, []string{"//config/rules.json"}},
		{"a new file", func() { write(t, root, "packages/a/src/sub/new.txt", "n") }, []string{"src/sub/new.txt"}},
		{"a removed file", func() { os.Remove(filepath.Join(root, "packages/a/src/sub/deep.txt")) }, []string{"src/sub/deep.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := recheck(t, tc.edit); !slices.Equal(got, tc.want) {
				t.Fatalf("Recheck = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRecheckRewrites: a file the task declares in rewrites, written again with the bytes the key
// took, has not moved; written with other bytes, it has. The same rewrite of a file the task
// does not declare has moved (an edit undone while the task ran looks alike), and Recheck names
// it in SameBytes so that the run can name rewrites.
func TestRecheckRewrites(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write(t, root, "packages/a/package.json", `{"name":"a"}`)
	write(t, root, "packages/a/src/in.ts", "v1")
	p := &graph.Project{Name: "a", Dir: "packages/a", AbsDir: filepath.Join(root, "packages/a")}
	task := &graph.Task{ID: "a#build", Outputs: []string{"dist/**"}, Rewrites: []string{"package.json"}}
	ws := &graph.Workspace{Root: root, CacheDir: filepath.Join(root, ".vx"), Projects: []*graph.Project{p}}
	ws.Index()
	for _, tc := range []struct {
		name           string
		edit           func()
		want, wantSame []string
	}{
		{"a declared file written with its bytes", func() { write(t, root, "packages/a/package.json", `{"name":"a"}`) }, nil, nil},
		{"a declared file written with other bytes", func() { write(t, root, "packages/a/package.json", `{"name":"b"}`) }, []string{"package.json"}, nil},
		{"an undeclared file written with its bytes", func() { write(t, root, "packages/a/src/in.ts", "v1") }, []string{"src/in.ts"}, []string{"src/in.ts"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write(t, root, "packages/a/package.json", `{"name":"a"}`)
			write(t, root, "packages/a/src/in.ts", "v1")
			age(t, root)
			h := New(Options{Workspace: ws})
			m, err := h.Manifest(ctx, p, task, nil)
			if err != nil {
				t.Fatal(err)
			}
			h.StatFolders(p, m.Inputs)
			tc.edit()
			h.Invalidate(p.Dir)
			moved, err := h.Recheck(ctx, p, task, m.Inputs)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(moved, tc.want) || !slices.Equal(m.Inputs.SameBytes(), tc.wantSame) {
				t.Fatalf("Recheck = %q, SameBytes %q; want %q, %q", moved, m.Inputs.SameBytes(), tc.want, tc.wantSame)
			}
		})
	}
}

// BenchmarkRecheck is the check made after a task ran, on a project of files inputs none of
// which moved: an lstat per file and per folder.
func BenchmarkRecheck(b *testing.B) {
	for _, files := range []int{3, 100} {
		b.Run(fmt.Sprintf("files=%d", files), func(b *testing.B) {
			ctx := context.Background()
			root := b.TempDir()
			for i := range files {
				write(b, root, fmt.Sprintf("p/src/d%d/f%d.ts", i%10, i), "x")
			}
			p := &graph.Project{Name: "p", Dir: "p", AbsDir: filepath.Join(root, "p")}
			task := &graph.Task{ID: "p#build", Outputs: []string{"dist/**"}}
			h := New(Options{Root: root, CacheDir: filepath.Join(root, ".vx")})
			m, err := h.Manifest(ctx, p, task, nil)
			if err != nil {
				b.Fatal(err)
			}
			h.StatFolders(p, m.Inputs)
			b.ResetTimer()
			for range b.N {
				if moved, err := h.Recheck(ctx, p, task, m.Inputs); err != nil || len(moved) > 0 {
					b.Fatalf("Recheck = %q, %v", moved, err)
				}
			}
		})
	}
}
