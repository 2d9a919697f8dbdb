package cache

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/vzn/vx/engine/store"
)

// Intact says a restore would change nothing only when every listed output is in place as
// archived and nothing else lies under the outputs; a listing that is not the task's, or a link
// out of its outputs, is never in place.
func TestIntactOnlyWhenNothingWouldChange(t *testing.T) {
	other := "other\n"
	for _, c := range []struct {
		name    string
		listing []archived
		disk    map[string]string // project-relative path → content; "->target" a symlink
		want    bool
	}{
		{"in place", []archived{{name: "dist/o.txt", content: "out\n"}, {name: "dist/sub/s.txt", content: "s\n"}},
			map[string]string{"dist/o.txt": "out\n", "dist/sub/s.txt": "s\n"}, true},
		{"a link in place", []archived{{name: "dist/o.txt", content: "out\n"}, {name: "dist/alias", link: "o.txt"}},
			map[string]string{"dist/o.txt": "out\n", "dist/alias": "->o.txt"}, true},
		{"nothing listed, nothing there", nil, nil, true},
		{"nothing listed, a file there", nil, map[string]string{"dist/o.txt": "out\n"}, false},
		{"missing", []archived{{name: "dist/o.txt", content: "out\n"}}, map[string]string{"dist/keep.txt": "k\n"}, false},
		{"none there", []archived{{name: "dist/o.txt", content: "out\n"}}, nil, false},
		{"content differs, same size", []archived{{name: "dist/o.txt", content: "out\n"}}, map[string]string{"dist/o.txt": "OUT\n"}, false},
		{"a stray beside", []archived{{name: "dist/o.txt", content: "out\n"}}, map[string]string{"dist/o.txt": "out\n", "dist/stray.txt": "x"}, false},
		{"a stray in a folder under", []archived{{name: "dist/o.txt", content: "out\n"}}, map[string]string{"dist/o.txt": "out\n", "dist/a/b/c.txt": "x"}, false},
		{"another link target", []archived{{name: "dist/o.txt", content: "out\n"}, {name: "dist/alias", link: "o.txt"}},
			map[string]string{"dist/o.txt": "out\n", "dist/alias": "->sub"}, false},
		{"a file where the link is", []archived{{name: "dist/o.txt", content: "out\n"}, {name: "dist/alias", link: "o.txt"}},
			map[string]string{"dist/o.txt": "out\n", "dist/alias": "out\n"}, false},
		{"a listing out of the outputs", []archived{{name: "src/a.txt", content: "source\n"}}, nil, false},
		{"a listing that climbs out", []archived{{name: "dist/../src/a.txt", content: "source\n"}}, nil, false},
		{"a link out of the outputs", []archived{{name: "dist/o.txt", link: "../src/a.txt"}}, map[string]string{"dist/o.txt": "->../src/a.txt"}, false},
		{"listed twice", []archived{{name: "dist/o.txt", content: "out\n"}, {name: "dist/o.txt", content: "out\n"}},
			map[string]string{"dist/o.txt": "out\n"}, false},
		{"the listing's hash is not the archive's", []archived{{name: "dist/o.txt", content: "out\n", listed: &other}},
			map[string]string{"dist/o.txt": "out\n"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newCacheFixture(t)
			for rel, content := range c.disk {
				abs := filepath.Join(f.p.AbsDir, filepath.FromSlash(rel))
				if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
					t.Fatal(err)
				}
				if target, ok := cutLink(content); ok {
					if err := os.Symlink(target, abs); err != nil {
						t.Fatal(err)
					}
					continue
				}
				f.write(filepath.ToSlash(filepath.Join("packages/p", rel)), content)
			}
			files, _ := craft(c.listing...)
			if got := Intact(f.ws, f.p, f.task, files, nil, contentHasher{f.root}); got != c.want {
				t.Fatalf("Intact = %v, want %v", got, c.want)
			}
			if c.want {
				// The restore agrees: it changes nothing.
				f.putEntry(key(1), c.listing...)
				if hit, ok, err := f.open(RemoteConfig{}).Get(context.Background(), f.task, key(1)); !ok || err != nil || hit.Changed {
					t.Fatalf("the restore of what Intact found in place: ok %v, err %v, changed %v", ok, err, hit.Changed)
				}
			}
		})
	}
}

func cutLink(content string) (string, bool) {
	if len(content) > 2 && content[:2] == "->" {
		return content[2:], true
	}
	return "", false
}

// A hit the run was told is intact (Options.Intact) restores nothing and says how many files its
// entry lists; one it was not told of, or whose entry is another, is restored as ever.
func TestIntactHitRestoresNothing(t *testing.T) {
	f := newCacheFixture(t)
	f.putEntry(key(2), archived{name: "dist/o.txt", content: "out\n"}, archived{name: "dist/p.txt", content: "p\n"})
	entry, _, err := f.st.Entry(context.Background(), key(2))
	if err != nil {
		t.Fatal(err)
	}
	told := map[string]string{f.task.ID: entry.OutputsBlob}
	c, err := Open(context.Background(), Options{Workspace: f.ws, Store: f.st, Files: contentHasher{f.root},
		Intact: func(id string, e store.Entry) (int, bool) {
			return 7, told[id] == e.OutputsBlob
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	hit, ok, err := c.Get(context.Background(), f.task, key(2))
	if !ok || err != nil || hit.Changed || hit.Files != 7 {
		t.Fatalf("an intact hit: ok %v, err %v, changed %v, files %d", ok, err, hit.Changed, hit.Files)
	}
	if f.read("packages/p/dist/o.txt") != "" {
		t.Fatal("an intact hit wrote its outputs")
	}
	told[f.task.ID] = "another blob"
	hit, ok, err = c.Get(context.Background(), f.task, key(2))
	if !ok || err != nil || !hit.Changed || hit.Files != 2 || f.read("packages/p/dist/o.txt") != "out\n" {
		t.Fatalf("a hit not told intact: ok %v, err %v, changed %v, files %d", ok, err, hit.Changed, hit.Files)
	}
}
