package cache

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/graph"
)

// link makes a symlink at rel (workspace-relative) to target.
func (f *cacheFixture) link(rel, target string) {
	f.t.Helper()
	abs := filepath.Join(f.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Symlink(target, abs); err != nil {
		f.t.Fatal(err)
	}
}

// A package's link to itself, as tshy leaves it (dist/node_modules/<name> -> the package folder),
// is archived as a link, never followed, and restored as the same link once dist/ is gone.
func TestSelfLinkIsCachedAndRestored(t *testing.T) {
	f := newCacheFixture(t)
	f.write("packages/p/dist/esm/index.js", "export {}\n")
	f.link("packages/p/dist/node_modules/@s/p", "../../..") // scoped: the package folder
	f.link("packages/p/dist/node_modules/p", "../..")       // unscoped: the package folder
	c := f.open(RemoteConfig{})
	if _, err := c.Put(context.Background(), f.task, key(0), []byte("log\n"), time.Second); err != nil {
		t.Fatalf("a self link refused: %v", err)
	}
	e, ok, err := f.st.Entry(context.Background(), key(0))
	if !ok || err != nil {
		t.Fatalf("no entry: %v", err)
	}
	links := map[string]string{}
	for _, o := range e.Outputs {
		if o.Link != "" {
			links[o.Path] = o.Link
		}
	}
	if len(e.Outputs) != 3 || links["dist/node_modules/@s/p"] != "../../.." || links["dist/node_modules/p"] != "../.." {
		t.Fatalf("the entry lists %+v: want the file and both links, not what they lead to", e.Outputs)
	}
	if err := os.RemoveAll(filepath.Join(f.p.AbsDir, "dist")); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := c.Get(context.Background(), f.task, key(0)); !ok || err != nil {
		t.Fatalf("the entry was not restored: ok %v, err %v, %q", ok, err, f.warn.all())
	}
	for rel, want := range map[string]string{"dist/node_modules/@s/p": "../../..", "dist/node_modules/p": "../.."} {
		if got, err := os.Readlink(filepath.Join(f.p.AbsDir, filepath.FromSlash(rel))); err != nil || got != want {
			t.Errorf("%s restored as %q (%v), want a link to %s", rel, got, err, want)
		}
	}
	if got := f.read("packages/p/dist/node_modules/@s/p/dist/esm/index.js"); got != "export {}\n" {
		t.Errorf("through the restored link the package reads %q", got)
	}
	if got := f.read("packages/p/src/a.txt"); got != "source\n" {
		t.Errorf("the sources read %q", got)
	}
}

// linkAttack is a link a task's outputs hold that vx refuses, and the words of its reason.
type linkAttack struct {
	name, rel, target, reason string
}

// linkAttacks are the links neither an archive nor a restore accepts. The fixture's workspace
// holds project q beside p, whose build declares dist/**.
var linkAttacks = []linkAttack{
	{"outside-project", "dist/cfg", "../../../vx.workspace.ts", "outside its project"},
	{"outside-workspace", "dist/up", "../../../..", "outside the workspace"},
	{"git", "dist/git", "../../../.git/config", "inside .git"},
	{"state", "dist/index", "../../../.vx/index.db", "inside vx's state folder"},
	{"other-outputs", "dist/q", "../../q/dist/q.txt", "inside another project's outputs"},
	{"absolute", "dist/abs", "/etc/passwd", "an absolute target"},
	{"source", "dist/out.txt", "../src/a.txt", "not a folder that holds the link"},
	{"climbs-late", "dist/late", "node_modules/p/../../src", "climbs (..) after it descends"},
	{"through-self-link", "dist/src", "node_modules/p/src", "through another link of the outputs"},
	{"to-self-link", "dist/me", "node_modules/p", "through another link of the outputs"},
}

// withOtherProject adds project q, whose build declares dist/**, with an output on disk.
func (f *cacheFixture) withOtherProject() {
	q := f.project("q")
	q.Tasks["build"] = &graph.Task{ID: "q#build", Project: "q", Name: "build", Command: "build", Cache: true, Outputs: []string{"dist/**"}}
	f.ws.Index()
	f.write("packages/q/dist/q.txt", "q\n")
}

// A task whose outputs hold a link out of its project, into .git, the state folder or another
// project's outputs, an absolute one, or one that reaches past what its text says, is not cached,
// with the reason naming the link, its target and why.
func TestArchiveRefusesEachLinkAttack(t *testing.T) {
	for i, a := range linkAttacks {
		t.Run(a.name, func(t *testing.T) {
			f := newCacheFixture(t)
			f.withOtherProject()
			f.write("packages/p/dist/o.txt", "out\n")
			f.link("packages/p/dist/node_modules/p", "../..")
			f.link("packages/p/"+a.rel, a.target)
			c := f.open(RemoteConfig{})
			_, err := c.Put(context.Background(), f.task, key(i), []byte("log\n"), time.Second)
			if err == nil || !strings.Contains(err.Error(), a.rel) || !strings.Contains(err.Error(), a.target) ||
				!strings.Contains(err.Error(), a.reason) {
				t.Fatalf("want the reason naming %s, %s and %q, got %v", a.rel, a.target, a.reason, err)
			}
			if _, ok, _ := f.st.Entry(context.Background(), key(i)); ok {
				t.Fatal("an entry was stored")
			}
		})
	}
}

// An entry (crafted, as a shared cache could serve it) listing any of those links is a miss with
// one warning giving the reason; nothing is planted and nothing is written through a link.
func TestRestoreRefusesEachLinkAttack(t *testing.T) {
	for i, a := range linkAttacks {
		t.Run(a.name, func(t *testing.T) {
			f := newCacheFixture(t)
			f.withOtherProject()
			c := f.open(RemoteConfig{})
			f.putEntry(key(i), archived{name: "dist/node_modules/p", link: "../.."}, archived{name: a.rel, link: a.target},
				archived{name: "dist/o.txt", content: "out\n"})
			if _, ok, err := c.Get(context.Background(), f.task, key(i)); ok || err != nil {
				t.Fatalf("a link to %s restored: ok %v, err %v", a.target, ok, err)
			}
			if _, err := os.Lstat(filepath.Join(f.p.AbsDir, "dist")); err == nil {
				t.Fatal("the restore planted dist/")
			}
			w := f.warn.all()
			if len(w) != 1 || !strings.Contains(w[0], a.rel) || !strings.Contains(w[0], a.reason) {
				t.Fatalf("want one warning naming %s and %q, got %q", a.rel, a.reason, w)
			}
		})
	}
}

// A restore never writes through a link, a self link it restores included: an entry listing a file
// beneath its own self link is refused, and the package folder the link names is left alone.
func TestRestoreNeverWritesThroughASelfLink(t *testing.T) {
	f := newCacheFixture(t)
	c := f.open(RemoteConfig{})
	f.putEntry(key(1), archived{name: "dist/node_modules/p", link: "../.."},
		archived{name: "dist/node_modules/p/src/a.txt", content: "pwned\n"})
	if _, ok, _ := c.Get(context.Background(), f.task, key(1)); ok {
		t.Fatal("a file beneath a self link restored")
	}
	if got := f.read("packages/p/src/a.txt"); got != "source\n" {
		t.Fatalf("the source was written through the link: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(f.p.AbsDir, "dist")); err == nil {
		t.Fatal("the rejected restore left dist/")
	}
	// The same with the link already on disk, as a hit of the task left it.
	f.link("packages/p/dist/node_modules/p", "../..")
	f.putEntry(key(2), archived{name: "dist/node_modules/p/src/a.txt", content: "pwned\n"})
	if _, ok, _ := c.Get(context.Background(), f.task, key(2)); ok {
		t.Fatal("a file beneath a self link on disk restored")
	}
	if got := f.read("packages/p/src/a.txt"); got != "source\n" {
		t.Fatalf("the source was written through the link on disk: %q", got)
	}
}

// Links that lead to links inside the outputs travel, as a shared library's versioned names do
// (libfoo.so -> libfoo.so.1 -> libfoo.so.1.2.3), and so does a path through a link to a folder
// of the outputs.
func TestLinkChainsInsideTheOutputsTravel(t *testing.T) {
	f := newCacheFixture(t)
	f.write("packages/p/dist/lib/libfoo.so.1.2.3", "elf\n")
	f.link("packages/p/dist/lib/libfoo.so.1", "libfoo.so.1.2.3")
	f.link("packages/p/dist/lib/libfoo.so", "libfoo.so.1")
	f.link("packages/p/dist/current", "lib")
	f.link("packages/p/dist/foo", "current/libfoo.so")
	c := f.open(RemoteConfig{})
	if _, err := c.Put(context.Background(), f.task, key(0), []byte("log\n"), time.Second); err != nil {
		t.Fatalf("links between outputs refused: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(f.p.AbsDir, "dist")); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := c.Get(context.Background(), f.task, key(0)); !ok || err != nil {
		t.Fatalf("not restored: ok %v, err %v, %q", ok, err, f.warn.all())
	}
	if got := f.read("packages/p/dist/foo"); got != "elf\n" {
		t.Fatalf("dist/foo reads %q", got)
	}
}
