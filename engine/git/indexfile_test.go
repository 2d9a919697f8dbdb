package git

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// gitIn runs git in dir, failing the test on an error.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// filledRepo is a repository whose index holds what an index can: plain, executable, symlink and
// gitlink entries, names with a tab, a newline and spaces, a long name, nested folders, an
// intent-to-add entry, a skip-worktree one, and a conflict's stages 1 to 3.
func filledRepo(t *testing.T, initArgs ...string) string {
	t.Helper()
	dir := gitRepo(t)
	if len(initArgs) > 0 {
		if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
			t.Fatal(err)
		}
		gitIn(t, dir, append([]string{"init", "-q", "-b", "main"}, initArgs...)...)
		gitIn(t, dir, "config", "user.email", "t@example.com")
		gitIn(t, dir, "config", "user.name", "t")
	}
	write := func(name, body string, mode os.FileMode) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("n", 250)
	for i, name := range []string{"a.txt", "tab\there.txt", "new\nline.txt", "sub dir/x.txt", "sub dir/deeper/y.txt",
		"packages/p1/src/index.js", "packages/p1/src/index.test.js", "packages/p2/src/index.js", long + "/" + long + ".txt", "conflict.txt"} {
		write(name, fmt.Sprintf("file %d\n", i), 0o644)
	}
	write("run.sh", "#!/bin/sh\n", 0o755)
	if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "one")
	gitIn(t, dir, "checkout", "-qb", "other")
	write("conflict.txt", "theirs\n", 0o644)
	gitIn(t, dir, "commit", "-qam", "theirs")
	gitIn(t, dir, "checkout", "-q", "main")
	write("conflict.txt", "ours\n", 0o644)
	gitIn(t, dir, "commit", "-qam", "ours")
	// The merge fails on the conflict, leaving its stages in the index.
	_ = exec.Command("git", "-C", dir, "merge", "-q", "other").Run()
	write("added-later.txt", "later\n", 0o644)
	gitIn(t, dir, "add", "-N", "added-later.txt")
	gitIn(t, dir, "update-index", "--skip-worktree", "packages/p2/src/index.js")
	head := strings.TrimSpace(gitIn(t, dir, "rev-parse", "HEAD"))
	gitIn(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+head+",vendor/lib")
	return dir
}

// fromGit is the index as `git ls-files -s --debug` lists it, beneath dir.
func fromGit(t *testing.T, dir string) map[string]IndexEntry {
	t.Helper()
	out, err := Run(context.Background(), dir, "-c", "core.quotepath=off", "ls-files", "-s", "--debug", "-z")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := parseIndexListing(out)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// fromFile is the index file parsed by vx, beneath dir; ok as parseIndexFile answers it.
func fromFile(t *testing.T, dir string) (map[string]IndexEntry, bool) {
	t.Helper()
	out := strings.Split(strings.TrimRight(gitIn(t, dir, "rev-parse", "--git-path", "index", "--show-object-format", "--show-prefix"), "\n"), "\n")
	prefix := ""
	if len(out) == 3 {
		prefix = out[2]
	}
	file := out[0]
	if !filepath.IsAbs(file) {
		file = filepath.Join(dir, file)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return parseIndexFile(data, out[1], prefix)
}

// vx's reading of the index file answers what git lists, entry for entry, flags included, in
// every version git writes and for either object format, from the top or a folder within.
func TestIndexFileAsGitListsIt(t *testing.T) {
	for name, tc := range map[string]struct {
		init    []string
		version string
		sub     string
	}{
		"version 2":          {version: "2"},
		"version 3":          {version: "3"},
		"version 4":          {version: "4"},
		"sha256, version 2":  {init: []string{"--object-format=sha256"}, version: "2"},
		"sha256, version 4":  {init: []string{"--object-format=sha256"}, version: "4"},
		"from a folder":      {version: "4", sub: "packages"},
		"from a folder, v2":  {version: "2", sub: "sub dir"},
		"with no checksum":   {version: "3"},
		"from a deep folder": {version: "3", sub: "sub dir/deeper"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := filledRepo(t, tc.init...)
			if name == "with no checksum" {
				gitIn(t, dir, "config", "index.skipHash", "true")
			}
			gitIn(t, dir, "update-index", "--index-version", tc.version)
			at := filepath.Join(dir, filepath.FromSlash(tc.sub))
			want := fromGit(t, at)
			got, ok := fromFile(t, at)
			if !ok {
				t.Fatal("the index file was left to git")
			}
			if len(want) < 5 && tc.sub == "" {
				t.Fatalf("git lists only %d entries", len(want))
			}
			if !reflect.DeepEqual(got, want) {
				for p, w := range want {
					if g, ok := got[p]; !ok || g != w {
						t.Errorf("%q: file %+v (%v), git %+v", p, g, ok, w)
					}
				}
				for p := range got {
					if _, ok := want[p]; !ok {
						t.Errorf("%q: in the file's reading only", p)
					}
				}
			}
			x, err := ReadIndex(context.Background(), at)
			if err != nil || !reflect.DeepEqual(x.Entries, want) {
				t.Errorf("ReadIndex: %v, %d entries, want %d", err, len(x.Entries), len(want))
			}
		})
	}
}

// What vx does not read itself — a split index, a sparse one, a checksum that does not hold, a
// file cut short, another version — it leaves to git, and ReadIndex still answers git's entries.
func TestIndexFileLeftToGit(t *testing.T) {
	dir := filledRepo(t)
	file := filepath.Join(dir, ".git", "index")
	read := func(t *testing.T) {
		t.Helper()
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for name, d := range map[string][]byte{
			"a changed byte": append(append([]byte{}, data[:40]...), append([]byte{data[40] ^ 1}, data[41:]...)...),
			"cut short":      data[:len(data)/2],
			"version 5":      append(append([]byte{}, data[:7]...), append([]byte{5}, data[8:]...)...),
			"empty":          nil,
		} {
			if _, ok := parseIndexFile(d, "sha1", ""); ok {
				t.Errorf("%s: read as an index", name)
			}
		}
	}
	read(t)

	gitIn(t, dir, "update-index", "--split-index")
	if _, ok := fromFile(t, dir); ok {
		t.Error("a split index was read as a whole one")
	}
	want := fromGit(t, dir)
	x, err := ReadIndex(context.Background(), dir)
	if err != nil || !reflect.DeepEqual(x.Entries, want) || len(want) == 0 {
		t.Errorf("split index: %v, %d entries, want git's %d", err, len(x.Entries), len(want))
	}
	gitIn(t, dir, "update-index", "--no-split-index")

	sparse := gitRepo(t)
	for _, name := range []string{"top.txt", "packages/p1/src/index.js", "packages/p2/src/index.js", "packages/p2/lib/x.js"} {
		p := filepath.Join(sparse, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, sparse, "add", "-A")
	gitIn(t, sparse, "commit", "-qm", "one")
	gitIn(t, sparse, "sparse-checkout", "set", "--cone", "--sparse-index", "packages/p1")
	if _, ok := fromFile(t, sparse); ok {
		t.Error("a sparse index was read as a whole one")
	}
	want = fromGit(t, sparse)
	x, err = ReadIndex(context.Background(), sparse)
	if err != nil || !reflect.DeepEqual(x.Entries, want) || len(want) == 0 {
		t.Errorf("sparse index: %v, %d entries, want git's %d", err, len(x.Entries), len(want))
	}
}

// An index without a checksum (index.skipHash) is parsed as it stands: no byte changed, nor a
// file cut anywhere, makes the reading panic or read past the data.
func TestIndexFileDamagedWithoutChecksum(t *testing.T) {
	dir := filledRepo(t)
	gitIn(t, dir, "config", "index.skipHash", "true")
	gitIn(t, dir, "update-index", "--index-version", "4")
	data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := parseIndexFile(data, "sha1", ""); !ok {
		t.Fatal("the undamaged index was not read")
	}
	zeros := make([]byte, 20)
	body := data[:len(data)-20]
	for i := range body {
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			d := append(append([]byte{}, body...), zeros...)
			d[i] ^= flip
			parseIndexFile(d, "sha1", "")
		}
		parseIndexFile(append(append([]byte{}, body[:i]...), zeros...), "sha1", "")
	}
}
