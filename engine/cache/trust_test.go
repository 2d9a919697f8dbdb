package cache

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/store"
)

// contentHasher is the FileHasher of the tests: every file read and hashed.
type contentHasher struct{ root string }

func (h contentHasher) FileHashOf(rel string, fi fs.FileInfo) (string, error) {
	data, err := os.ReadFile(filepath.Join(h.root, filepath.FromSlash(rel)))
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// notices collects what the cache shows, task notices and the remote cache's warning alike.
type notices struct {
	mu    sync.Mutex
	lines []string
}

func (n *notices) add(msg string) {
	n.mu.Lock()
	n.lines = append(n.lines, msg)
	n.mu.Unlock()
}

func (n *notices) all() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.lines...)
}

// cacheFixture is a workspace of one project p whose task p#build declares dist/**, with its
// sources in src/ and the workspace config at the root, and a store in .vx.
type cacheFixture struct {
	*fixture
	p    *graph.Project
	task *graph.Task
	st   *store.Store
	warn notices
}

func newCacheFixture(t *testing.T) *cacheFixture {
	f := &cacheFixture{fixture: newFixture(t)}
	f.p = f.project("p")
	f.task = &graph.Task{ID: "p#build", Project: "p", Name: "build", Command: "build", Cache: true, Outputs: []string{"dist/**"}}
	f.p.Tasks["build"] = f.task
	f.ws.Index()
	f.write("vx.workspace.ts", "config\n")
	f.write("packages/p/src/a.txt", "source\n")
	st, err := store.Open(context.Background(), f.ws.CacheDir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f.st = st
	return f
}

// open opens the run's cache, with remote as its remote cache (the zero value for none).
func (f *cacheFixture) open(remote RemoteConfig) *Cache {
	f.t.Helper()
	c, err := Open(context.Background(), Options{Workspace: f.ws, Store: f.st, Files: contentHasher{f.root}, Remote: remote,
		Notice: func(taskID, msg string) { f.warn.add(msg) }, Warn: f.warn.add})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { c.Close() })
	return c
}

// archived is one entry of a crafted archive: a file, or a symlink when link is set.
type archived struct {
	name, content, link string
	// listed is the content the listing records, when it differs from the archive's.
	listed *string
}

// craft makes an entry's listing and tar.zst archive.
func craft(entries ...archived) ([]store.OutputFile, []byte) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	var files []store.OutputFile
	for _, e := range entries {
		if e.link != "" {
			files = append(files, store.OutputFile{Path: e.name, Link: e.link})
			tw.WriteHeader(&tar.Header{Name: e.name, Typeflag: tar.TypeSymlink, Linkname: e.link, Format: tar.FormatGNU})
			continue
		}
		listed := e.content
		if e.listed != nil {
			listed = *e.listed
		}
		sum := sha256.Sum256([]byte(listed))
		files = append(files, store.OutputFile{Path: e.name, Size: int64(len(e.content)), Mode: 0o644, Hash: hex.EncodeToString(sum[:])})
		tw.WriteHeader(&tar.Header{Name: e.name, Typeflag: tar.TypeReg, Size: int64(len(e.content)), Mode: 0o644, Format: tar.FormatGNU})
		tw.Write([]byte(e.content))
	}
	tw.Close()
	enc, _ := zstd.NewWriter(nil)
	defer enc.Close()
	return files, enc.EncodeAll(buf.Bytes(), nil)
}

// putEntry stores a crafted entry for key in the local cache.
func (f *cacheFixture) putEntry(key string, entries ...archived) {
	f.t.Helper()
	files, archive := craft(entries...)
	blob, err := f.st.CAS().Put(archive)
	if err != nil {
		f.t.Fatal(err)
	}
	logBlob, err := f.st.CAS().Put([]byte("log\n"))
	if err != nil {
		f.t.Fatal(err)
	}
	now := time.Now()
	e := store.Entry{Hash: key, TaskID: f.task.ID, Project: "p", Command: "build", OutputsBlob: blob, Outputs: files,
		LogBlob: logBlob, Size: int64(len(archive)) + 4, Created: now, LastUsed: now}
	if err := f.st.PutEntry(context.Background(), e); err != nil {
		f.t.Fatal(err)
	}
}

// read answers a workspace file's content, "" when it cannot be read.
func (f *cacheFixture) read(rel string) string {
	data, _ := os.ReadFile(filepath.Join(f.root, filepath.FromSlash(rel)))
	return string(data)
}

// key is a cache key of the tests.
func key(n int) string { return strings.Repeat(string(rune('a'+n)), 64) }

// A restored symlink may point only inside the task's own outputs: a link into the sources or the
// config is a miss with one warning naming the path and the target, and nothing is planted.
func TestRestoredLinksStayInTheOutputs(t *testing.T) {
	for i, target := range []string{"../../../vx.workspace.ts", "../src/a.txt", "../src", "../../../.vx/index.db"} {
		t.Run(strings.ReplaceAll(target, "/", "_"), func(t *testing.T) {
			f := newCacheFixture(t)
			c := f.open(RemoteConfig{})
			k := key(i)
			f.putEntry(k, archived{name: "dist/out.txt", link: target}, archived{name: "dist/o.txt", content: "out\n"})
			if _, ok, err := c.Get(context.Background(), f.task, k); ok || err != nil {
				t.Fatalf("a link to %s restored: ok %v, err %v", target, ok, err)
			}
			if _, err := os.Lstat(filepath.Join(f.p.AbsDir, "dist/out.txt")); err == nil {
				t.Fatalf("the link to %s was planted", target)
			}
			w := f.warn.all()
			if len(w) != 1 || !strings.Contains(w[0], "dist/out.txt") || !strings.Contains(w[0], target) {
				t.Fatalf("want one warning naming dist/out.txt and %s, got %q", target, w)
			}
		})
	}
	// A link inside the outputs travels.
	f := newCacheFixture(t)
	c := f.open(RemoteConfig{})
	f.putEntry(key(9), archived{name: "dist/alias", link: "o.txt"}, archived{name: "dist/o.txt", content: "out\n"},
		archived{name: "dist/sub/up", link: "../o.txt"}, archived{name: "dist/loop", link: "."})
	if _, ok, err := c.Get(context.Background(), f.task, key(9)); !ok || err != nil {
		t.Fatalf("links inside the outputs: ok %v, err %v, %q", ok, err, f.warn.all())
	}
	if got := f.read("packages/p/dist/sub/up"); got != "out\n" {
		t.Fatalf("dist/sub/up reads %q", got)
	}
}

// A task that makes a symlink out of its outputs is not cached, with the reason: it never makes an
// entry that others restore.
func TestArchiveRefusesLinksOutOfTheOutputs(t *testing.T) {
	for i, target := range []string{"../src/a.txt", "../../../vx.workspace.ts", "/etc/passwd"} {
		t.Run(strings.ReplaceAll(target, "/", "_"), func(t *testing.T) {
			f := newCacheFixture(t)
			c := f.open(RemoteConfig{})
			f.write("packages/p/dist/o.txt", "out\n")
			if err := os.Symlink(target, filepath.Join(f.p.AbsDir, "dist/link")); err != nil {
				t.Fatal(err)
			}
			_, err := c.Put(context.Background(), f.task, key(i), []byte("log\n"), time.Second)
			if err == nil || !strings.Contains(err.Error(), "dist/link") || !strings.Contains(err.Error(), target) {
				t.Fatalf("want the reason naming dist/link and %s, got %v", target, err)
			}
			if _, ok, _ := f.st.Entry(context.Background(), key(i)); ok {
				t.Fatal("an entry was stored")
			}
		})
	}
}

// workspaceOf is the workspace of a cacheFixture at root: project p with task p#build.
func workspaceOf(root string) (*graph.Workspace, *graph.Task) {
	ws := &graph.Workspace{Root: root, CacheDir: filepath.Join(root, ".vx"), ConfigFile: "vx.workspace.ts"}
	p := &graph.Project{Name: "p", Dir: "packages/p", AbsDir: filepath.Join(root, "packages", "p"), Tasks: map[string]*graph.Task{}}
	task := &graph.Task{ID: "p#build", Project: "p", Name: "build", Command: "build", Cache: true, Outputs: []string{"dist/**"}}
	p.Tasks["build"] = task
	ws.Projects = []*graph.Project{p}
	ws.Index()
	return ws, task
}

// before writes the outputs a restore finds on disk: dist/o.txt and dist/keep.txt.
func (f *cacheFixture) before() {
	f.write("packages/p/dist/o.txt", "old\n")
	f.write("packages/p/dist/keep.txt", "keep\n")
}

// unchanged checks that the outputs and sources are as before wrote them, with nothing of the
// restore left: no link, no new folder, no aside, no journal.
func (f *cacheFixture) unchanged() {
	f.t.Helper()
	for rel, want := range map[string]string{"packages/p/dist/o.txt": "old\n", "packages/p/dist/keep.txt": "keep\n",
		"packages/p/src/a.txt": "source\n", "vx.workspace.ts": "config\n"} {
		if got := f.read(rel); got != want {
			f.t.Errorf("%s reads %q, want %q", rel, got, want)
		}
	}
	names, _ := os.ReadDir(filepath.Join(f.p.AbsDir, "dist"))
	for _, d := range names {
		if d.Name() != "o.txt" && d.Name() != "keep.txt" {
			f.t.Errorf("the restore left dist/%s", d.Name())
		}
	}
	if j, _ := os.ReadDir(filepath.Join(f.ws.CacheDir, journalDirName)); len(j) != 0 {
		f.t.Errorf("journals left: %v", j)
	}
}

// rejected is an entry that a restore rejects part way: a link inside the outputs, a file
// replacing dist/o.txt, one in a new folder, then a file whose content is not its hash.
func rejected() []archived {
	other := "other\n"
	return []archived{{name: "dist/new", link: "o.txt"}, {name: "dist/o.txt", content: "new\n"},
		{name: "dist/sub/x.txt", content: "x\n"}, {name: "dist/bad.txt", content: "bad\n", listed: &other}}
}

// A rejected restore removes every path it created and puts back what it replaced: the task then
// runs on the outputs as they were, with no symlink it did not make.
func TestRejectedRestoreRollsBack(t *testing.T) {
	other := "other\n"
	for name, entry := range map[string][]archived{
		"inside":    rejected(),
		"issue":     {{name: "dist/out.txt", link: "../src/a.txt"}, {name: "dist/o.txt", content: "bad\n", listed: &other}},
		"fresh-sub": {{name: "dist/sub/deep/a", content: "a\n"}, {name: "dist/sub/b", content: "b\n", listed: &other}},
	} {
		t.Run(name, func(t *testing.T) {
			f := newCacheFixture(t)
			f.before()
			c := f.open(RemoteConfig{})
			f.putEntry(key(1), entry...)
			if _, ok, err := c.Get(context.Background(), f.task, key(1)); ok || err != nil {
				t.Fatalf("a bad entry restored: ok %v, err %v", ok, err)
			}
			f.unchanged()
			if w := f.warn.all(); len(w) != 1 {
				t.Errorf("want one warning, got %q", w)
			}
		})
	}
}

// A cancelled restore is rolled back as a rejected one is.
func TestCancelledRestoreRollsBack(t *testing.T) {
	f := newCacheFixture(t)
	f.before()
	c := f.open(RemoteConfig{})
	f.putEntry(key(2), archived{name: "dist/new", link: "o.txt"}, archived{name: "dist/o.txt", content: "new\n"},
		archived{name: "dist/z.txt", content: "z\n"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.afterChange = func(rel string) {
		if rel == "packages/p/dist/o.txt" {
			cancel()
		}
	}
	if _, ok, _ := c.Get(ctx, f.task, key(2)); ok {
		t.Fatal("a cancelled restore hit")
	}
	f.unchanged()
}

// restoreHelperEnv names the workspace a helper process restores into (TestKilledRestoreIsRolledBack).
const restoreHelperEnv = "VX_CACHE_TEST_RESTORE_HELPER"

// restoreHelper restores key(3) into the workspace at root and stops for ever once it has replaced
// dist/o.txt, saying so on stdout: its parent kills it there.
func restoreHelper(root string) {
	ws, task := workspaceOf(root)
	st, err := store.Open(context.Background(), ws.CacheDir, store.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	c, err := Open(context.Background(), Options{Workspace: ws, Store: st, Files: contentHasher{root}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	c.afterChange = func(rel string) {
		if rel == "packages/p/dist/o.txt" {
			fmt.Println("ready")
			select {} // killed here
		}
	}
	_, ok, err := c.Get(context.Background(), task, key(3))
	fmt.Fprintln(os.Stderr, "the restore ended:", ok, err)
	os.Exit(2)
}

// A restore killed part way (SIGKILL) is rolled back by the next run before any task runs.
func TestKilledRestoreIsRolledBack(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGKILL")
	}
	f := newCacheFixture(t)
	f.before()
	f.putEntry(key(3), archived{name: "dist/new", link: "o.txt"}, archived{name: "dist/sub/x.txt", content: "x\n"},
		archived{name: "dist/o.txt", content: "new\n"}, archived{name: "dist/z.txt", content: "z\n"})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), restoreHelperEnv+"="+f.root)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the helper said %q\n%s", line, stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	// Killed mid-restore: the link planted, dist/o.txt replaced, its old content aside.
	if target, err := os.Readlink(filepath.Join(f.p.AbsDir, "dist/new")); err != nil || target != "o.txt" {
		t.Fatalf("the helper was not killed mid-restore: dist/new %q %v", target, err)
	}
	if got := f.read("packages/p/dist/o.txt"); got != "new\n" {
		t.Fatalf("the helper was not killed mid-restore: dist/o.txt %q", got)
	}
	f.open(RemoteConfig{}) // the next run
	f.unchanged()
}
