package watch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/goleak"

	"github.com/vzn/vx/engine/filestate"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// repo makes a git repository with a commit of files (path → content; a content starting with
// "->" makes a symlink to the rest) and answers its root.
func repo(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	writeFiles(t, root, files)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "first"}} {
		runGit(t, root, args...)
	}
	return root
}

func runGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=vx", "GIT_AUTHOR_EMAIL=vx@example.com",
		"GIT_COMMITTER_NAME=vx", "GIT_COMMITTER_EMAIL=vx@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(text, "->"); ok {
			_ = os.Remove(p)
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var sample = map[string]string{
	".gitignore":                         "dist/\n*.log\n",
	"vx.workspace.ts":                    "export default {}\n",
	"packages/a/package.json":            `{"name":"a"}`,
	"packages/a/src/index.js":            "export const a = 1\n",
	"packages/a/src/lib/deep.js":         "export const deep = 1\n",
	"packages/a/link.js":                 "->src/index.js",
	"packages/b/package.json":            `{"name":"b"}`,
	"packages/b/src/index.js":            "export const b = 2\n",
	"packages/b/node_modules/x/index.js": "module.exports = 1\n",
}

// start starts a watcher on root and waits for its first look.
func start(t *testing.T, root string, hashed func(string) bool) *Watcher {
	t.Helper()
	state := filepath.Join(root, ".vx")
	w, err := Start(Options{Root: root, StateDir: state, Hashed: hashed, Log: func(msg string) { t.Log(msg) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	deadline := time.Now().Add(10 * time.Second)
	for !w.Ready() {
		if time.Now().After(deadline) {
			t.Fatal("the watcher never finished its first look")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return w
}

// snapshot answers the watcher's snapshot, failing the test when there is none.
func snapshot(t *testing.T, w *Watcher) *filestate.Snapshot {
	t.Helper()
	s, err := w.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// same fails the test where the snapshot answers otherwise than a scan of the disk: what git
// shows (everywhere and per folder; node_modules, never an input, left out), each visible file's
// lstat and known hash, and the walks of the folders under base.
func same(t *testing.T, root string, snap *filestate.Snapshot, walkBases ...string) {
	t.Helper()
	ctx := context.Background()
	scan := filestate.NewScan(root, filepath.Join(root, ".vx"))
	want, err := scan.Visible(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := snap.Visible(ctx, ".")
	// A tracked file deleted from the work tree is listed by git and skipped when statted.
	want = slices.DeleteFunc(want, func(rel string) bool {
		_, err := os.Lstat(filepath.Join(root, rel))
		return err != nil || strings.Contains("/"+rel, "/node_modules/") || strings.HasSuffix(rel, "/")
	})
	if !slices.Equal(got, want) {
		t.Fatalf("visible files:\n got %q\nwant %q", got, want)
	}
	for _, dir := range []string{"packages", "packages/a", "packages/b/src"} {
		w, _ := scan.Visible(ctx, dir)
		w = slices.DeleteFunc(w, func(rel string) bool {
			_, err := os.Lstat(filepath.Join(root, dir, rel))
			return err != nil || strings.Contains("/"+rel, "/node_modules/") || strings.HasSuffix(rel, "/")
		})
		g, _ := snap.Visible(ctx, dir)
		if !slices.Equal(g, w) && !(len(g) == 0 && len(w) == 0) {
			t.Fatalf("visible files of %s:\n got %q\nwant %q", dir, g, w)
		}
	}
	for _, rel := range want {
		gi, err := snap.Lstat(rel)
		if err != nil {
			t.Fatalf("lstat %s: %v", rel, err)
		}
		wi, _ := scan.Lstat(rel)
		g, w := filestate.InfoOf(gi), filestate.InfoOf(wi)
		if g.Mode != w.Mode || g.Size != w.Size || g.MtimeNs != w.MtimeNs || g.Ino != w.Ino {
			t.Fatalf("lstat %s: got %+v, want %+v", rel, g, w)
		}
		if g.Hash != "" {
			var sum string
			if w.Mode&fs.ModeSymlink != 0 {
				target, _ := os.Readlink(filepath.Join(root, rel))
				sum = filestate.LinkHash(target)
			} else {
				sum, _ = filestate.HashFile(filepath.Join(root, rel))
			}
			if g.Hash != sum {
				t.Fatalf("hash of %s: got %s, want %s", rel, g.Hash, sum)
			}
		}
	}
	// The disk agrees with it, as an asker in another process checks.
	if err := snap.Verify(ctx); err != nil {
		t.Fatalf("the snapshot does not verify against the disk it is of: %v", err)
	}
	for _, base := range walkBases {
		var g, w []string
		if err := snap.WalkFiles(base, func(rel string, _ fs.FileMode) { g = append(g, rel) }); err != nil {
			t.Fatal(err)
		}
		if err := scan.WalkFiles(base, func(rel string, _ fs.FileMode) { w = append(w, rel) }); err != nil {
			t.Fatal(err)
		}
		slices.Sort(g)
		slices.Sort(w)
		if !slices.Equal(g, w) {
			t.Fatalf("walk %s:\n got %q\nwant %q", base, g, w)
		}
	}
}

// TestSnapshotIsTheScan edits a repository every way a day does and checks after each edit that
// the watcher's snapshot answers what a scan of the disk answers.
func TestSnapshotIsTheScan(t *testing.T) {
	root := repo(t, sample)
	w := start(t, root, func(rel string) bool { return strings.Contains(rel, "/dist/") })
	same(t, root, snapshot(t, w), ".", "packages/a", "packages/b")
	steps := []struct {
		name string
		do   func()
	}{
		{"edit a file", func() { writeFiles(t, root, map[string]string{"packages/a/src/index.js": "export const a = 2\n"}) }},
		{"create a file", func() { writeFiles(t, root, map[string]string{"packages/a/src/new.js": "new\n"}) }},
		{"create an ignored file", func() { writeFiles(t, root, map[string]string{"packages/a/debug.log": "x\n"}) }},
		{"create a folder of files", func() {
			writeFiles(t, root, map[string]string{"packages/c/src/x/y.js": "y\n", "packages/c/package.json": "{}"})
		}},
		{"create an ignored folder", func() {
			writeFiles(t, root, map[string]string{"packages/a/dist/index.js": "built\n", "packages/a/dist/sub/more.js": "more\n"})
		}},
		{"rename over a file", func() {
			writeFiles(t, root, map[string]string{"packages/b/src/index.js.tmp": "export const b = 3\n"})
			mustDo(t, os.Rename(filepath.Join(root, "packages/b/src/index.js.tmp"), filepath.Join(root, "packages/b/src/index.js")))
		}},
		{"rename a folder", func() {
			mustDo(t, os.Rename(filepath.Join(root, "packages/c"), filepath.Join(root, "packages/d")))
		}},
		{"delete a tracked file", func() { mustDo(t, os.Remove(filepath.Join(root, "packages/a/src/lib/deep.js"))) }},
		{"delete a folder", func() { mustDo(t, os.RemoveAll(filepath.Join(root, "packages/d"))) }},
		{"change the ignore rules", func() { writeFiles(t, root, map[string]string{".gitignore": "*.log\n"}) }},
		{"add an ignored file to the index", func() {
			writeFiles(t, root, map[string]string{".gitignore": "dist/\n*.log\n"})
			runGit(t, root, "add", "-f", "packages/a/debug.log")
		}},
		{"retarget a symlink", func() { writeFiles(t, root, map[string]string{"packages/a/link.js": "->src/new.js"}) }},
		{"nest a repository", func() {
			writeFiles(t, root, map[string]string{"packages/e/inner.js": "inner\n"})
			runGit(t, filepath.Join(root, "packages/e"), "init", "-q")
		}},
		{"swap a file for a folder", func() {
			mustDo(t, os.Remove(filepath.Join(root, "packages/a/src/new.js")))
			writeFiles(t, root, map[string]string{"packages/a/src/new.js/inside.js": "inside\n"})
		}},
	}
	for _, s := range steps {
		s.do()
		snap := snapshot(t, w)
		t.Run(s.name, func(t *testing.T) { same(t, root, snap, ".", "packages/a", "packages/a/dist", "packages/b") })
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotHashes checks that the watcher hashes what git shows and what the outputs may hold,
// in the background, and nothing else.
func TestSnapshotHashes(t *testing.T) {
	root := repo(t, sample)
	writeFiles(t, root, map[string]string{"packages/a/dist/out.js": "out\n", "packages/a/other.log": "log\n"})
	w := start(t, root, func(rel string) bool { return strings.HasPrefix(rel, "packages/a/dist/") })
	want := map[string]bool{"packages/a/src/index.js": true, "packages/a/link.js": true, "packages/a/dist/out.js": true}
	deadline := time.Now().Add(10 * time.Second)
	for {
		snap := snapshot(t, w)
		missing := []string{}
		for rel := range want {
			fi, err := snap.Lstat(rel)
			if err != nil {
				t.Fatal(err)
			}
			if filestate.InfoOf(fi).Hash == "" {
				missing = append(missing, rel)
			}
		}
		if len(missing) == 0 {
			fi, _ := snap.Lstat("packages/a/other.log")
			if h := filestate.InfoOf(fi).Hash; h != "" {
				t.Fatalf("an ignored file that is no output was hashed: %s", h)
			}
			same(t, root, snap)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("never hashed: %v", missing)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WaitHashed returns once the files the first look left to hash in the background (more than a
// settle hashes inline) are hashed: its snapshot knows every hash, and is the one answered while
// nothing changes.
func TestWaitHashed(t *testing.T) {
	files := maps.Clone(sample)
	body := strings.Repeat("x", 32<<10)
	for i := range 2 * inlineHashFiles {
		files[fmt.Sprintf("packages/a/src/gen/f%04d.js", i)] = fmt.Sprintf("%d %s", i, body)
	}
	root := repo(t, files)
	w, err := Start(Options{Root: root, StateDir: filepath.Join(root, ".vx"), Log: func(msg string) { t.Log(msg) }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.WaitHashed(context.Background()); err != nil {
		t.Fatal(err)
	}
	snap := snapshot(t, w)
	for i := range 2 * inlineHashFiles {
		rel := fmt.Sprintf("packages/a/src/gen/f%04d.js", i)
		fi, err := snap.Lstat(rel)
		if err != nil {
			t.Fatal(err)
		}
		if filestate.InfoOf(fi).Hash == "" {
			t.Fatalf("%s is not hashed once WaitHashed returned", rel)
		}
	}
	if again := snapshot(t, w); again != snap {
		t.Fatalf("another snapshot while nothing changed: %v", filestate.ChangedDirs(snap, again))
	}
}

// TestEditThenAsk writes a file and asks at once: the snapshot never answers the old content.
func TestEditThenAsk(t *testing.T) {
	root := repo(t, sample)
	w := start(t, root, nil)
	p := filepath.Join(root, "packages/a/src/index.js")
	for i := range 50 {
		text := strings.Repeat("x", i%7) + "\n"
		mustDo(t, os.WriteFile(p, []byte(text), 0o644))
		fi, err := snapshot(t, w).Lstat("packages/a/src/index.js")
		if err != nil {
			t.Fatal(err)
		}
		info := filestate.InfoOf(fi)
		if info.Size != int64(len(text)) {
			t.Fatalf("edit %d: the snapshot says %d bytes, the file has %d", i, info.Size, len(text))
		}
		if sum := sha256.Sum256([]byte(text)); info.Hash != "" && info.Hash != hex.EncodeToString(sum[:]) {
			t.Fatalf("edit %d: a stale hash %s", i, info.Hash)
		}
	}
}

// TestOverflowRescans makes the watcher lose events: it takes everything again, and the snapshot
// is still the scan.
func TestOverflowRescans(t *testing.T) {
	root := repo(t, sample)
	w := start(t, root, nil)
	signal, take, cancel := w.Subscribe()
	defer cancel()
	// Stop the pump from hearing these, as if the queue had dropped them.
	w.settleMu.Lock()
	writeFiles(t, root, map[string]string{"packages/a/src/lost.js": "lost\n"})
	time.Sleep(100 * time.Millisecond) // the pump records the event meanwhile
	w.mu.Lock()
	w.pending = map[string]bool{}
	w.mu.Unlock()
	w.settleMu.Unlock()
	w.lost(fsnotify.ErrEventOverflow)
	same(t, root, snapshot(t, w), ".")
	select {
	case <-signal:
	case <-time.After(5 * time.Second):
		t.Fatal("no change after the overflow")
	}
	if c := take(); !c.Rescan {
		t.Fatalf("the change after an overflow: %+v, want a rescan", c)
	}
}

// TestSubscribeSeesVisibleChanges: subscribers hear of edits to files git shows, not of ignored
// ones.
func TestSubscribeSeesVisibleChanges(t *testing.T) {
	root := repo(t, sample)
	w := start(t, root, nil)
	signal, take, cancel := w.Subscribe()
	defer cancel()
	writeFiles(t, root, map[string]string{"packages/a/dist/x.js": "x\n", "packages/a/y.log": "y\n"})
	snapshot(t, w)
	writeFiles(t, root, map[string]string{"packages/b/src/index.js": "changed\n"})
	var got []string
	deadline := time.After(5 * time.Second)
	for !slices.Contains(got, "packages/b/src/index.js") {
		select {
		case <-signal:
			got = append(got, take().Paths...)
		case <-deadline:
			t.Fatalf("changes heard: %q", got)
		}
	}
	for _, p := range got {
		if strings.Contains(p, "dist") || strings.HasSuffix(p, ".log") {
			t.Fatalf("an ignored file was reported: %q", got)
		}
	}
}

// TestOutsideGit: a workspace outside git shows every file but node_modules'.
func TestOutsideGit(t *testing.T) {
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	writeFiles(t, root, sample)
	w := start(t, root, nil)
	same(t, root, snapshot(t, w), ".")
	writeFiles(t, root, map[string]string{"packages/a/dist/new.js": "new\n"})
	same(t, root, snapshot(t, w), ".")
}

// TestStateFolderAppears: a state folder made after the watcher started (the first vx run of a
// workspace) is an entry of the root the snapshot answers from disk, never watched.
func TestStateFolderAppears(t *testing.T) {
	root := repo(t, sample)
	w := start(t, root, nil)
	writeFiles(t, root, map[string]string{".vx/index.db": "x", ".vx/cas/ab/cd": "blob"})
	snap := snapshot(t, w)
	fi, err := snap.Lstat(".vx/index.db")
	if err != nil || fi.Size() != 1 {
		t.Fatalf("a file of the state folder: %v %v", fi, err)
	}
	same(t, root, snap, ".")
}

// replaceDist removes packages/a/dist and makes it again with n files, as `rm -rf dist && cp -R
// src dist` does, and answers the new folder's inode number.
func replaceDist(t *testing.T, root string, n int) uint64 {
	t.Helper()
	dist := filepath.Join(root, "packages/a/dist")
	mustDo(t, os.RemoveAll(dist))
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("packages/a/dist/f%02d.js", i)] = fmt.Sprintf("%d\n", i)
	}
	writeFiles(t, root, files)
	fi, err := os.Lstat(dist)
	if err != nil {
		t.Fatal(err)
	}
	return filestate.InfoOf(fi).Ino
}

// TestReplacedFolderOfTheSameInode replaces a watched folder by one the file system gave the old
// one's inode number, as ext4 often does for `rm -rf dist && mkdir dist`: the kernel dropped the
// old one's watch, so the new one is watched and listed, and a later write in it is seen.
func TestReplacedFolderOfTheSameInode(t *testing.T) {
	root := repo(t, sample)
	writeFiles(t, root, map[string]string{"packages/a/dist/old.js": "old\n"})
	w := start(t, root, func(rel string) bool { return strings.Contains(rel, "/dist/") })
	snapshot(t, w)
	w.settleMu.Lock() // no settle until the mirror's entry says the new folder's inode number
	ino := replaceDist(t, root, 5)
	time.Sleep(100 * time.Millisecond) // the pump records the events meanwhile
	w.tree.dirs["packages/a"]["dist"].entry.Info.Ino = ino
	w.settleMu.Unlock()
	same(t, root, snapshot(t, w), "packages/a/dist")
	writeFiles(t, root, map[string]string{"packages/a/dist/later.js": "later\n"})
	snap := snapshot(t, w)
	same(t, root, snap, "packages/a/dist")
	if _, err := snap.Lstat("packages/a/dist/later.js"); err != nil {
		t.Fatalf("a write in the new folder: %v", err)
	}
}

// TestReplacedFolderOverAndOver replaces an output folder 100 times, asking between, as a watched
// build does: each snapshot lists the folder as the disk does.
func TestReplacedFolderOverAndOver(t *testing.T) {
	root := repo(t, sample)
	w := start(t, root, func(rel string) bool { return strings.Contains(rel, "/dist/") })
	for i := range 100 {
		replaceDist(t, root, 1+i%20)
		snap := snapshot(t, w)
		var got []string
		mustDo(t, snap.WalkFiles("packages/a/dist", func(rel string, _ fs.FileMode) { got = append(got, rel) }))
		if len(got) != 1+i%20 {
			t.Fatalf("replacement %d: the snapshot lists %d files in dist, the disk %d", i, len(got), 1+i%20)
		}
	}
}

// TestMovedFolderStaysWatched moves a folder, within one settle, to a name that sorts before its
// old one, then after it, then away with another made in its place: each folder is listed under
// its name, and a later write in each is seen.
func TestMovedFolderStaysWatched(t *testing.T) {
	root := repo(t, sample)
	w := start(t, root, nil)
	snapshot(t, w)
	for i, move := range []struct {
		from, to string
		remake   bool
	}{{"packages/b", "packages/a0", false}, {"packages/a0", "packages/c", false}, {"packages/c", "packages/a1", true}} {
		w.settleMu.Lock() // every event of the move in one settle
		mustDo(t, os.Rename(filepath.Join(root, move.from), filepath.Join(root, move.to)))
		later := []string{fmt.Sprintf("%s/src/later%d.js", move.to, i)}
		if move.remake {
			writeFiles(t, root, map[string]string{move.from + "/src/index.js": "made again\n"})
			later = append(later, fmt.Sprintf("%s/src/later%d.js", move.from, i))
		}
		time.Sleep(100 * time.Millisecond)
		w.settleMu.Unlock()
		same(t, root, snapshot(t, w), ".")
		for _, name := range later {
			writeFiles(t, root, map[string]string{name: "later\n"})
		}
		snap := snapshot(t, w)
		same(t, root, snap, ".")
		for _, name := range later {
			if _, err := snap.Lstat(name); err != nil {
				t.Fatalf("move %d: a write in the moved folder: %v", i, err)
			}
		}
	}
}

// TestRandomBurstsAreTheScan makes bursts of random edits — files written, removed and renamed,
// folders made, removed, replaced and moved, some of them within the watcher's settles and some
// between — and checks after each burst that the snapshot answers what a scan of the disk does.
// The seed is logged; VX_WATCH_SEED replays one.
func TestRandomBurstsAreTheScan(t *testing.T) {
	seed := time.Now().UnixNano()
	if s, err := strconv.ParseInt(os.Getenv("VX_WATCH_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	root := repo(t, sample)
	w := start(t, root, func(rel string) bool { return strings.Contains(rel, "/dist/") })
	names := []string{"a", "b", "c", "dist", "src", "x0", "zz"}
	pick := func() string { return names[rng.IntN(len(names))] }
	// folders answers the workspace's folders under packages, deepest last.
	folders := func() []string {
		var out []string
		_ = filepath.WalkDir(filepath.Join(root, "packages"), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() && d.Name() != "node_modules" {
				out = append(out, p)
			}
			return nil
		})
		return out
	}
	anyFolder := func() string { f := folders(); return f[rng.IntN(len(f))] }
	edits := []func(){
		func() {
			_ = os.WriteFile(filepath.Join(anyFolder(), pick()+".js"), fmt.Appendf(nil, "%d\n", rng.Int()), 0o644)
		},
		func() { _ = os.Remove(filepath.Join(anyFolder(), pick()+".js")) },
		func() {
			_ = os.Rename(filepath.Join(anyFolder(), pick()+".js"), filepath.Join(anyFolder(), pick()+".js"))
		},
		func() {
			dir := filepath.Join(anyFolder(), pick())
			_ = os.MkdirAll(filepath.Join(dir, pick()), 0o755)
			_ = os.WriteFile(filepath.Join(dir, pick()+".js"), []byte("made\n"), 0o644)
		},
		func() {
			if f := anyFolder(); f != filepath.Join(root, "packages") {
				_ = os.RemoveAll(f)
			}
		},
		func() { // replaced, as a build's rm -rf dist && cp -R src dist
			if f := anyFolder(); f != filepath.Join(root, "packages") {
				_ = os.RemoveAll(f)
				_ = os.MkdirAll(f, 0o755)
				_ = os.WriteFile(filepath.Join(f, pick()+".js"), []byte("again\n"), 0o644)
			}
		},
		func() {
			if f := anyFolder(); f != filepath.Join(root, "packages") {
				_ = os.Rename(f, filepath.Join(anyFolder(), pick()))
			}
		},
	}
	for burst := range 150 {
		held := rng.IntN(2) == 0
		if held { // the whole burst in one settle
			w.settleMu.Lock()
		}
		for range 1 + rng.IntN(8) {
			edits[rng.IntN(len(edits))]()
		}
		if held {
			time.Sleep(20 * time.Millisecond)
			w.settleMu.Unlock()
		}
		snap := snapshot(t, w)
		var got, want []string
		mustDo(t, snap.WalkFiles("packages", func(rel string, _ fs.FileMode) { got = append(got, rel) }))
		scan := filestate.NewScan(root, filepath.Join(root, ".vx"))
		mustDo(t, scan.WalkFiles("packages", func(rel string, _ fs.FileMode) { want = append(want, rel) }))
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("burst %d (seed %d): the snapshot walks\n%q\nthe disk\n%q", burst, seed, got, want)
		}
		for _, rel := range got { // every file's stat, and the hash of each the watcher hashed (dist's too)
			gi, err := snap.Lstat(rel)
			mustDo(t, err)
			wi, err := os.Lstat(filepath.Join(root, rel))
			mustDo(t, err)
			g, w := filestate.InfoOf(gi), filestate.InfoOf(wi)
			if g.Mode != w.Mode || g.Size != w.Size || g.MtimeNs != w.MtimeNs || g.Ino != w.Ino {
				t.Fatalf("burst %d (seed %d): lstat %s: got %+v, want %+v", burst, seed, rel, g, w)
			}
			sum, _ := filestate.HashFile(filepath.Join(root, rel))
			if w.Mode&fs.ModeSymlink != 0 {
				target, _ := os.Readlink(filepath.Join(root, rel))
				sum = filestate.LinkHash(target)
			}
			if g.Hash != "" && g.Hash != sum {
				t.Fatalf("burst %d (seed %d): hash of %s: got %s, want %s", burst, seed, rel, g.Hash, sum)
			}
		}
		same(t, root, snap)
	}
}

// An older snapshot, replayed after an edit of any kind, does not verify against the disk (an
// asker then scans), where the watcher's snapshot after the edit does.
func TestOldSnapshotIsStale(t *testing.T) {
	root := repo(t, sample)
	w := start(t, root, nil)
	abs := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	edits := []struct {
		name string
		do   func() error
	}{
		{"a file's content, same size", func() error {
			return os.WriteFile(abs("packages/a/src/index.js"), []byte("export const a = 2\n"), 0o644)
		}},
		{"a new file in a folder", func() error { return os.WriteFile(abs("packages/b/src/new.js"), []byte("x"), 0o644) }},
		{"a new file at the root", func() error { return os.WriteFile(abs("new.txt"), []byte("x"), 0o644) }},
		{"a removed file", func() error { return os.Remove(abs("packages/a/src/lib/deep.js")) }},
		{"a file moved over another", func() error { return os.Rename(abs("packages/b/src/new.js"), abs("packages/b/src/index.js")) }},
		{"a folder's mode", func() error { return os.Chmod(abs("packages/a/src"), 0o700) }},
		{"a symlink's target", func() error {
			if err := os.Remove(abs("packages/a/link.js")); err != nil {
				return err
			}
			return os.Symlink("src/lib", abs("packages/a/link.js"))
		}},
	}
	for _, e := range edits {
		old := snapshot(t, w)
		if err := old.Verify(context.Background()); err != nil {
			t.Fatalf("before %s: the snapshot does not verify: %v", e.name, err)
		}
		mustDo(t, e.do())
		if err := old.Verify(context.Background()); !errors.Is(err, filestate.ErrStale) {
			t.Fatalf("after %s: the older snapshot verifies (%v)", e.name, err)
		}
		same(t, root, snapshot(t, w))
	}
}

// logLines collects what a watcher says.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) log(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, msg)
}

func (l *logLines) has(sub string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, sub) {
			return true
		}
	}
	return false
}

// eventually waits for cond, failing the test with what after a minute.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A folder the OS refuses to watch (permission denied at the first look, the watch limit reached
// at a folder made later; injected, as root bypasses permissions and the limit is the host's) is
// named, keeps the watcher from vouching for anything while it lasts, and is not for good: once
// the cause goes the watcher vouches again, its subscribers hear of it, and later edits are heard.
func TestFaultIsNotForGood(t *testing.T) {
	root := repo(t, sample)
	var refused sync.Map // absolute folder → the error the OS gives
	refused.Store(filepath.Join(root, "packages/a/src"), syscall.EACCES)
	var logs logLines
	w, err := Start(Options{Root: root, StateDir: filepath.Join(root, ".vx"), Log: logs.log, RetryEvery: 20 * time.Millisecond,
		addWatch: func(abs string) error {
			if err, ok := refused.Load(abs); ok {
				return err.(error)
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.WaitReady(context.Background()); err == nil || !strings.Contains(err.Error(), "cannot watch packages/a/src: permission denied") {
		t.Fatalf("the first look: %v, want the folder named", err)
	}
	if !logs.has("cannot watch packages/a/src: permission denied") {
		t.Fatalf("the watcher did not name the folder: %q", logs.lines)
	}
	if _, err := w.Snapshot(context.Background()); err == nil {
		t.Fatal("a watcher that could not watch a folder vouched for the file state")
	}
	signal, take, cancel := w.Subscribe()
	defer cancel()
	refused.Delete(filepath.Join(root, "packages/a/src"))
	select {
	case <-signal:
	case <-time.After(time.Minute):
		t.Fatal("the watcher never recovered from the folder it could not watch")
	}
	if c := take(); !c.Rescan {
		t.Fatalf("after the recovery: %+v, want a rescan", c)
	}
	same(t, root, snapshot(t, w), ".")
	if !logs.has("every folder is watched again") {
		t.Fatalf("the recovery was not said: %q", logs.lines)
	}

	// A folder made later, past the watch limit.
	refused.Store(filepath.Join(root, "packages/c"), syscall.ENOSPC)
	writeFiles(t, root, map[string]string{"packages/c/index.js": "c\n"})
	eventually(t, "the limit named", func() bool {
		return logs.has("cannot watch packages/c: no space left on device: the inotify watch limit")
	})
	if _, err := w.Snapshot(context.Background()); err == nil {
		t.Fatal("a watcher past the watch limit vouched for the file state")
	}
	refused.Delete(filepath.Join(root, "packages/c"))
	eventually(t, "the recovery after the limit", func() bool { return w.Ready() })
	same(t, root, snapshot(t, w), ".")
	take()
	writeFiles(t, root, map[string]string{"packages/c/index.js": "c2\n"})
	eventually(t, "a later edit heard", func() bool { return slices.Contains(take().Paths, "packages/c/index.js") })
}

// settled waits for the watcher's snapshot to agree with a scan of the disk, and answers it.
func settledSame(t *testing.T, root string, w *Watcher) {
	t.Helper()
	same(t, root, snapshot(t, w), ".")
}

// A .gitignore above the workspace root (a workspace in a subfolder of its repository) is heard:
// what it ignores from then on is no longer visible, and again when it stops.
func TestGitignoreAboveTheRoot(t *testing.T) {
	top := repo(t, map[string]string{".gitignore": "*.log\n", "ws/vx.workspace.ts": "export default {}\n", "ws/src/a.js": "a\n"})
	root := filepath.Join(top, "ws")
	writeFiles(t, root, map[string]string{"src/gen.js": "generated\n"})
	w := start(t, root, nil)
	settledSame(t, root, w)
	writeFiles(t, top, map[string]string{".gitignore": "*.log\ngen.js\n"})
	eventually(t, "gen.js ignored", func() bool {
		vis, _ := snapshot(t, w).Visible(context.Background(), ".")
		return !slices.Contains(vis, "src/gen.js")
	})
	settledSame(t, root, w)
	writeFiles(t, top, map[string]string{".gitignore": "*.log\n"})
	eventually(t, "gen.js visible again", func() bool {
		vis, _ := snapshot(t, w).Visible(context.Background(), ".")
		return slices.Contains(vis, "src/gen.js")
	})
	settledSame(t, root, w)
}

// An input hard-linked from outside the workspace and written through its other name is heard:
// the snapshot then says what the disk says, hash included.
func TestHardLinkWrittenFromOutside(t *testing.T) {
	root := repo(t, sample)
	outside := filepath.Join(t.TempDir(), "shared.js")
	mustDo(t, os.WriteFile(outside, []byte("v1\n"), 0o644))
	mustDo(t, os.Link(outside, filepath.Join(root, "packages/a/src/shared.js")))
	w := start(t, root, nil)
	mustDo(t, w.WaitHashed(context.Background()))
	settledSame(t, root, w)
	mustDo(t, os.WriteFile(outside, []byte("v2 longer\n"), 0o644))
	eventually(t, "the write through the other name heard", func() bool {
		fi, err := snapshot(t, w).Lstat("packages/a/src/shared.js")
		return err == nil && fi.Size() == int64(len("v2 longer\n"))
	})
	settledSame(t, root, w)
	// A link made in the workspace after the first look is heard as well.
	other := filepath.Join(t.TempDir(), "other.js")
	mustDo(t, os.WriteFile(other, []byte("o1\n"), 0o644))
	mustDo(t, os.Link(other, filepath.Join(root, "packages/b/src/other.js")))
	settledSame(t, root, w)
	mustDo(t, os.WriteFile(other, []byte("o2 longer\n"), 0o644))
	eventually(t, "the write through the later link heard", func() bool {
		fi, err := snapshot(t, w).Lstat("packages/b/src/other.js")
		return err == nil && fi.Size() == int64(len("o2 longer\n"))
	})
	settledSame(t, root, w)
}

// An uncommitted folder replaced by a symlink (to a folder inside the workspace, and outside) is
// heard: the snapshot holds the link and nothing under it, as the disk does.
func TestUncommittedFolderReplacedBySymlink(t *testing.T) {
	root := repo(t, sample)
	writeFiles(t, root, map[string]string{"packages/a/gen/x.js": "x\n", "packages/a/gen/sub/y.js": "y\n"})
	w := start(t, root, nil)
	settledSame(t, root, w)
	mustDo(t, os.RemoveAll(filepath.Join(root, "packages/a/gen")))
	mustDo(t, os.Symlink("../b/src", filepath.Join(root, "packages/a/gen")))
	settledSame(t, root, w)
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"z.js": "z\n"})
	mustDo(t, os.Rename(filepath.Join(root, "packages/a/gen"), filepath.Join(root, "packages/a/gen.old")))
	mustDo(t, os.Symlink(outside, filepath.Join(root, "packages/a/gen")))
	settledSame(t, root, w)
	writeFiles(t, root, map[string]string{"packages/a/gen/w.js": "w\n"})
	settledSame(t, root, w)
}

// A bind mount over a workspace folder (root only: skipped where mount is not permitted) is heard:
// the folder's new content is watched, edits in it heard, and its old content again after the
// unmount.
func TestBindMountOverAFolder(t *testing.T) {
	root := repo(t, sample)
	other := t.TempDir()
	writeFiles(t, other, map[string]string{"mounted.js": "m\n", "deep/d.js": "d\n"})
	w := start(t, root, nil)
	target := filepath.Join(root, "packages/a/src")
	if out, err := exec.Command("mount", "--bind", other, target).CombinedOutput(); err != nil {
		t.Skipf("mount --bind is not permitted here: %v %s", err, out)
	}
	mounted := true
	unmount := func() {
		if mounted {
			if out, err := exec.Command("umount", target).CombinedOutput(); err != nil {
				t.Errorf("umount %s: %v %s", target, err, out)
			}
			mounted = false
		}
	}
	defer unmount()
	eventually(t, "the mount heard", func() bool {
		vis, _ := snapshot(t, w).Visible(context.Background(), ".")
		return slices.Contains(vis, "packages/a/src/mounted.js")
	})
	settledSame(t, root, w)
	writeFiles(t, other, map[string]string{"mounted.js": "m2 longer\n"})
	eventually(t, "an edit in the mount heard", func() bool {
		fi, err := snapshot(t, w).Lstat("packages/a/src/mounted.js")
		return err == nil && fi.Size() == int64(len("m2 longer\n"))
	})
	settledSame(t, root, w)
	unmount()
	eventually(t, "the unmount heard", func() bool {
		vis, _ := snapshot(t, w).Visible(context.Background(), ".")
		return slices.Contains(vis, "packages/a/src/index.js")
	})
	settledSame(t, root, w)
}
