package hasher

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/graph"
)

// runGit runs git in dir and answers its stdout.
func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b",
		"GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// originRepo makes a committed repository of two projects (text files, an empty file, a
// symlink, a binary file) with the extra files given, in the object format.
func originRepo(t *testing.T, format string, extra map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	runGit(t, root, "init", "-q", "--object-format="+format, "-b", "main")
	write(t, root, ".gitignore", ".vx/\ndist/\n")
	write(t, root, "packages/a/src/index.ts", "export const a = 1\nexport const b = 2\n")
	write(t, root, "packages/a/README.md", "# a\n\nline\n")
	write(t, root, "packages/a/empty.txt", "")
	write(t, root, "packages/a/logo.bin", "\x00\x01\r\n\x02binary\r\n")
	write(t, root, "packages/b/main.go", "package main\n\nfunc main() {}\n")
	if err := os.Symlink("../a/README.md", filepath.Join(root, "packages/b/link.md")); err != nil {
		t.Fatal(err)
	}
	for rel, content := range extra {
		write(t, root, rel, content)
	}
	runGit(t, root, "add", "-A")
	runGit(t, root, "commit", "-qm", "init")
	return root
}

// cloneRepo clones origin into a new folder with the config given (name=value) and answers it.
func cloneRepo(t *testing.T, origin string, config ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	args := []string{"clone", "-q"}
	for _, c := range config {
		args = append(args, "-c", c)
	}
	runGit(t, filepath.Dir(dir), append(args, origin, dir)...)
	return dir
}

// refreshIndex has git refresh the index of root once the clock has left the tick the index was
// written in, as the first `git status` after a checkout does: no entry is racily clean then.
func refreshIndex(t *testing.T, root string) {
	t.Helper()
	fi, err := os.Stat(filepath.Join(root, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	for !time.Now().After(fi.ModTime().Add(20 * time.Millisecond)) {
		time.Sleep(5 * time.Millisecond)
	}
	runGit(t, root, "update-index", "-q", "--unmerged", "--really-refresh")
}

// taskKeys answers the keys of a#build and b#build in the workspace at root, the manifests, and
// how many files the hasher opened to make them.
func taskKeys(t *testing.T, root string) (map[string]string, map[string]*Manifest, int) {
	t.Helper()
	keys, manifests, h := keysOf(t, root)
	return keys, manifests, h.FilesOpened()
}

// keysOf is taskKeys answering the hasher that made the keys.
func keysOf(t *testing.T, root string) (map[string]string, map[string]*Manifest, *Hasher) {
	t.Helper()
	ws := &graph.Workspace{Root: root, CacheDir: filepath.Join(root, ".vx"), Projects: []*graph.Project{
		{Name: "a", Dir: "packages/a", AbsDir: filepath.Join(root, "packages/a")},
		{Name: "b", Dir: "packages/b", AbsDir: filepath.Join(root, "packages/b")},
	}}
	ws.Index()
	h := New(Options{Workspace: ws, Salt: []byte("salt")})
	keys, manifests := map[string]string{}, map[string]*Manifest{}
	for _, name := range []string{"a", "b"} {
		p, _ := ws.Project(name)
		task := &graph.Task{ID: name + "#build", Command: "build", Outputs: []string{"dist/**"}}
		m, err := h.Manifest(context.Background(), p, task, nil)
		if err != nil {
			t.Fatal(err)
		}
		key, _, err := m.Key()
		if err != nil {
			t.Fatal(err)
		}
		keys[task.ID], manifests[task.ID] = key, m
	}
	return keys, manifests, h
}

// indexIDs answers git's index ids of root by root-relative path ("link:"-prefixed for a symlink).
func indexIDs(t *testing.T, root string) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(runGit(t, root, "ls-files", "-s")), "\n") {
		meta, path, _ := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		if f[0] == "120000" {
			ids[path] = "link:" + f[1]
		} else {
			ids[path] = f[1]
		}
	}
	return ids
}

// checkIndexIDs fails unless every input file's digest in the manifests is git's index id.
func checkIndexIDs(t *testing.T, root string, manifests map[string]*Manifest) {
	t.Helper()
	ids := indexIDs(t, root)
	n := 0
	for id, m := range manifests {
		dir := "packages/" + strings.TrimSuffix(id, "#build") + "/"
		for rel, digest := range m.Files {
			if want := ids[dir+rel]; digest != want {
				t.Errorf("%s: %s digest %s, git's index has %s", id, rel, digest, want)
			}
			n++
		}
	}
	if n != 6 {
		t.Fatalf("%d input files keyed, want 6", n)
	}
}

// touchAll moves the stamps of every file under root but .git: none is clean by stat then.
func touchAll(t *testing.T, root string) {
	t.Helper()
	later := time.Now().Add(time.Hour)
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			if err := os.Chtimes(p, later, later); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	})
}

// TestFreshCloneKeysWithoutReading: on a fresh clone whose index is not racy, every input's
// digest is git's index id and no file is opened; a copy whose files are all modified by stat
// (read and hashed by vx), and the same files outside any git repository, have the same keys.
func TestFreshCloneKeysWithoutReading(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			origin := originRepo(t, format, nil)
			clone := cloneRepo(t, origin)
			refreshIndex(t, clone)
			keys, manifests, opened := taskKeys(t, clone)
			if opened != 0 {
				t.Fatalf("a fresh clone opened %d input files to key its tasks", opened)
			}
			checkIndexIDs(t, clone, manifests)

			touched := cloneRepo(t, origin)
			touchAll(t, touched)
			again, _, opened := taskKeys(t, touched)
			if opened != 5 { // every input file but the symlink
				t.Fatalf("a clone modified by stat opened %d files, want 5", opened)
			}
			for id, key := range keys {
				if again[id] != key {
					t.Fatalf("%s: key %s when read, %s from the index", id, again[id], key)
				}
			}
			if format != "sha1" {
				return
			}
			// Outside git, vx computes the same ids itself.
			plain := t.TempDir()
			runGit(t, origin, "checkout-index", "-a", "--prefix="+plain+"/")
			outside, _, _ := taskKeys(t, plain)
			for id, key := range keys {
				if outside[id] != key {
					t.Fatalf("%s: key %s outside git, %s in the clone", id, outside[id], key)
				}
			}
		})
	}
}

// TestRacilyCleanFilesAreRead: straight after a clone the files written in the index's own
// timestamp tick are racily clean — their stat cannot tell an edit in that tick — and are read,
// the others are not; the keys are those of a refreshed index.
func TestRacilyCleanFilesAreRead(t *testing.T) {
	origin := originRepo(t, "sha1", nil)
	clone := cloneRepo(t, origin)
	index, err := os.Stat(filepath.Join(clone, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	racy := 0
	for _, rel := range []string{"packages/a/src/index.ts", "packages/a/README.md", "packages/a/empty.txt",
		"packages/a/logo.bin", "packages/b/main.go"} {
		fi, err := os.Lstat(filepath.Join(clone, rel))
		if err != nil {
			t.Fatal(err)
		}
		if !fi.ModTime().Before(index.ModTime()) {
			racy++
		}
	}
	keys, _, opened := taskKeys(t, clone)
	if opened != racy {
		t.Fatalf("opened %d files, but %d are racily clean", opened, racy)
	}
	refreshIndex(t, clone)
	again, _, opened := taskKeys(t, clone)
	if opened != 0 {
		t.Fatalf("opened %d files after the index was refreshed", opened)
	}
	for id, key := range keys {
		if again[id] != key {
			t.Fatalf("%s: key moved with the index refresh", id)
		}
	}
}

// TestIndexOlderThanNoFileIsTrusted: an index whose own mtime is not later than a file's
// vouches for none of them (each is racily clean), whatever their recorded stat says.
func TestIndexOlderThanNoFileIsTrusted(t *testing.T) {
	origin := originRepo(t, "sha1", nil)
	clone := cloneRepo(t, origin)
	refreshIndex(t, clone)
	keys, _, opened := taskKeys(t, clone)
	if opened != 0 {
		t.Fatalf("opened %d files of a refreshed clone", opened)
	}
	old := time.Unix(1, 0)
	if err := os.Chtimes(filepath.Join(clone, ".git", "index"), old, old); err != nil {
		t.Fatal(err)
	}
	again, _, opened := taskKeys(t, clone)
	if opened != 5 {
		t.Fatalf("opened %d files when the index is older than all of them, want 5", opened)
	}
	for id, key := range keys {
		if again[id] != key {
			t.Fatalf("%s: key moved", id)
		}
	}
}

// TestUnmergedAndUntrackedAreRead: a file in conflict (no stage-0 entry), one added with
// `git add -N` (an entry without content) and an untracked one are read, each keyed by the blob
// id of what the work tree holds.
func TestUnmergedAndUntrackedAreRead(t *testing.T) {
	root := originRepo(t, "sha1", nil)
	runGit(t, root, "checkout", "-q", "-b", "other")
	write(t, root, "packages/a/README.md", "# a\n\nother\n")
	runGit(t, root, "commit", "-qam", "other")
	runGit(t, root, "checkout", "-q", "main")
	write(t, root, "packages/a/README.md", "# a\n\nmain\n")
	runGit(t, root, "commit", "-qam", "main")
	cmd := exec.Command("git", "merge", "-q", "other")
	cmd.Dir = root
	if err := cmd.Run(); err == nil {
		t.Fatal("the merge did not conflict")
	}
	write(t, root, "packages/a/new.ts", "new\n")
	write(t, root, "packages/a/intent.ts", "intent\n")
	runGit(t, root, "add", "-N", "packages/a/intent.ts")
	refreshIndex(t, root)
	_, manifests, opened := taskKeys(t, root)
	if opened != 3 {
		t.Fatalf("opened %d files, want the conflicted, the intended and the untracked one", opened)
	}
	for _, rel := range []string{"README.md", "new.ts", "intent.ts"} {
		data, err := os.ReadFile(filepath.Join(root, "packages/a", rel))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := manifests["a#build"].Files[rel], gitHashObject(t, root, string(data)); got != want {
			t.Fatalf("%s: digest %s, want %s", rel, got, want)
		}
	}
}
