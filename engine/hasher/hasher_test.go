package hasher

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func write(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func age(t testing.TB, root string) {
	old := time.Now().Add(-time.Hour)
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil {
			os.Chtimes(p, old, old)
		}
		return nil
	})
}

func TestDefaultInputsFollowGit(t *testing.T) {
	root := t.TempDir()
	write(t, root, ".gitignore", "ignored.txt\n.vx/\n")
	write(t, root, "packages/a/src/x.ts", "x")
	write(t, root, "packages/a/ignored.txt", "i")
	write(t, root, "packages/a/dist/out.js", "o")
	write(t, root, "packages/a/untracked.ts", "u")
	write(t, root, "packages/b/y.ts", "y")
	write(t, root, ".vx/cas/aa/blob", "b")
	for _, args := range [][]string{{"init", "-q"}, {"add", ".gitignore", "packages/a/src", "packages/b"},
		{"-c", "user.name=a", "-c", "user.email=b", "commit", "-qm", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	p := &graph.Project{Name: "a", Dir: "packages/a", AbsDir: filepath.Join(root, "packages/a")}
	task := &graph.Task{ID: "a#build", Outputs: []string{"dist/**"}}
	h := New(Options{Root: root, CacheDir: filepath.Join(root, ".vx")})
	files, err := h.Inputs(context.Background(), p, task)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"src/x.ts", "untracked.ts"}; !reflect.DeepEqual(files, want) {
		t.Fatalf("inputs %v, want %v", files, want)
	}
	task.Inputs = []string{"**/*", "!dist/**"}
	files, err = h.Inputs(context.Background(), p, task)
	if err != nil {
		t.Fatal(err)
	}
	// Globs see what git sees: the ignored file is not an input either.
	if want := []string{"src/x.ts", "untracked.ts"}; !reflect.DeepEqual(files, want) {
		t.Fatalf("glob inputs %v, want %v", files, want)
	}
}

func TestStatCache(t *testing.T) {
	root := t.TempDir()
	write(t, root, "f.txt", "one")
	age(t, root)
	h := New(Options{Root: root})
	sum1, err := h.FileHash("f.txt")
	if err != nil {
		t.Fatal(err)
	}
	h2 := New(Options{Root: root, Stats: store.NewStatCache(h.Updates())})
	if sum, _ := h2.FileHash("f.txt"); sum != sum1 {
		t.Fatal("hash changed")
	}
	if _, hashed := h2.Counts(); hashed != 0 {
		t.Fatalf("an unchanged old file was read again")
	}
	// Same size, new content, new mtime: the stat differs, so it is hashed again.
	write(t, root, "f.txt", "two")
	h3 := New(Options{Root: root, Stats: store.NewStatCache(h.Updates())})
	if sum, _ := h3.FileHash("f.txt"); sum == sum1 {
		t.Fatal("a changed file kept its old hash")
	}
	// A file hashed within the racy window is hashed again next time even if its stat is unchanged.
	h4 := New(Options{Root: root, Stats: store.NewStatCache(h3.Updates())})
	h4.FileHash("f.txt")
	if _, hashed := h4.Counts(); hashed != 1 {
		t.Fatalf("a racily clean file was trusted")
	}
}

// A file rewritten a moment ago is hashed again once: a file system that stamps nanoseconds needs
// only a short racy window, so the next hasher trusts the row. One stamped in whole seconds keeps
// the long window.
func TestStatCacheRestampsOnce(t *testing.T) {
	root := t.TempDir()
	write(t, root, "f.txt", "one")
	path := filepath.Join(root, "f.txt")
	for _, tc := range []struct {
		name    string
		mtime   time.Time
		trusted bool
	}{
		{"fine stamp 300 ms old", time.Now().Add(-300*time.Millisecond - 123456*time.Nanosecond), true},
		{"fine stamp 10 ms old", time.Now().Add(-10*time.Millisecond - 123456*time.Nanosecond), false},
		{"whole-second stamp 1 s old", time.Now().Add(-time.Second).Truncate(time.Second), false},
	} {
		if err := os.Chtimes(path, tc.mtime, tc.mtime); err != nil {
			t.Fatal(err)
		}
		if tc.mtime.Nanosecond() != 0 {
			if fi, _ := os.Stat(path); fi.ModTime().Nanosecond() == 0 {
				t.Skipf("this file system stamps whole seconds")
			}
		}
		h := New(Options{Root: root})
		if _, err := h.FileHash("f.txt"); err != nil {
			t.Fatal(err)
		}
		h2 := New(Options{Root: root, Stats: store.NewStatCache(h.Updates())})
		h2.FileHash("f.txt")
		if _, hashed := h2.Counts(); (hashed == 0) != tc.trusted {
			t.Errorf("%s: hashed again %d times, want trusted %v", tc.name, hashed, tc.trusted)
		}
	}
}

func TestManifestKey(t *testing.T) {
	root := t.TempDir()
	write(t, root, "p/a.txt", "a")
	p := &graph.Project{Name: "p", Dir: "p", AbsDir: filepath.Join(root, "p")}
	task := &graph.Task{ID: "p#t", Command: "echo", Inputs: []string{"*.txt"}, Env: []string{"MODE"},
		ExecEnv: map[string]graph.EnvValue{"TOKEN": {Secret: "TOK"}}, DependsOn: []string{"q#t"}}
	env := map[string]string{"MODE": "prod", "TOK": "sekret"}
	h := New(Options{Root: root, Getenv: func(k string) string { return env[k] }})
	m, err := h.Manifest(context.Background(), p, task, map[string]string{"q#t": "k1"})
	if err != nil {
		t.Fatal(err)
	}
	k1, data, _ := m.Key()
	if strings.Contains(string(data), "sekret") || strings.Contains(string(data), HashBytes([]byte("sekret"))) ||
		!strings.Contains(string(data), "secret:salted:") {
		t.Fatalf("manifest: %s", data)
	}
	env["TOK"] = "other"
	m2, _ := h.Manifest(context.Background(), p, task, map[string]string{"q#t": "k1"})
	if k2, _, _ := m2.Key(); k2 == k1 {
		t.Fatal("a secret change did not change the key")
	}
	if _, err := h.Manifest(context.Background(), p, task, nil); err == nil {
		t.Fatal("a missing dependency key was accepted")
	}
}

// BenchmarkStatCache compares hashing 1,000 files of 16 KiB through a warm stat cache (a stat
// each) against reading and hashing them all.
func BenchmarkStatCache(b *testing.B) {
	root := b.TempDir()
	content := strings.Repeat("x", 16<<10)
	var rels []string
	for i := 0; i < 1000; i++ {
		rel := fmt.Sprintf("d%d/f%d.txt", i%10, i)
		write(b, root, rel, content)
		rels = append(rels, rel)
	}
	age(b, root)
	warm := New(Options{Root: root})
	for _, r := range rels {
		warm.FileHash(r)
	}
	stats := warm.Updates()
	b.Run("stat-cache", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			h := New(Options{Root: root, Stats: store.NewStatCache(stats)})
			for _, r := range rels {
				if _, err := h.FileHash(r); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("re-hash", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			h := New(Options{Root: root})
			for _, r := range rels {
				if _, err := h.FileHash(r); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// gitRepo makes root a git repository with everything but what .gitignore ignores committed.
func gitRepo(t *testing.T, root string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=a", "-c", "user.email=b", "commit", "-qm", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
}

// gitHashObject answers git's blob id of content, as `git hash-object --stdin` in root gives it.
func gitHashObject(t *testing.T, root, content string) string {
	t.Helper()
	cmd := exec.Command("git", "hash-object", "--stdin")
	cmd.Dir, cmd.Stdin = root, strings.NewReader(content)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git hash-object: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestGlobInputsSeeWhatGitSees: an explicit "**" sees neither node_modules (not even through a
// symlink into it), nor ignored folders (coverage, caches), nor the task's own outputs, nor a
// nested project's files; "//" globs reach root files; a symlink is hashed as its target text.
func TestGlobInputsSeeWhatGitSees(t *testing.T) {
	root := t.TempDir()
	write(t, root, ".gitignore", "node_modules/\ncoverage/\n.angular/\n.vx/\n")
	write(t, root, "tsconfig.base.json", "{}")
	write(t, root, "node_modules/dep/index.js", "dep")
	write(t, root, "apps/web/src/main.ts", "main")
	write(t, root, "apps/web/dist/main.js", "built")
	write(t, root, "apps/web/coverage/lcov.info", "cov")
	write(t, root, "apps/web/.angular/cache/x", "cache")
	write(t, root, "apps/web/nested/package.json", "{}")
	write(t, root, "apps/web/nested/n.ts", "n")
	if err := os.Symlink(filepath.Join(root, "node_modules"), filepath.Join(root, "apps/web/node_modules")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(root, "apps/web/etc-link")); err != nil {
		t.Fatal(err)
	}
	gitRepo(t, root)
	ws := &graph.Workspace{Root: root, CacheDir: filepath.Join(root, ".vx"), GlobalInputs: []string{"//tsconfig.base.json"},
		Projects: []*graph.Project{
			{Name: "web", Dir: "apps/web", AbsDir: filepath.Join(root, "apps/web")},
			{Name: "nested", Dir: "apps/web/nested", AbsDir: filepath.Join(root, "apps/web/nested")},
		}}
	ws.Index()
	p, _ := ws.Project("web")
	task := &graph.Task{ID: "web#build", Inputs: []string{"**", "//tsconfig.base.json"}, Outputs: []string{"dist/**"}}
	h := New(Options{Workspace: ws})
	files, err := h.Inputs(context.Background(), p, task)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"//tsconfig.base.json", "etc-link", "src/main.ts"}
	if !reflect.DeepEqual(files, want) {
		t.Fatalf("inputs %v, want %v", files, want)
	}
	m, err := h.Manifest(context.Background(), p, task, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Files["etc-link"]; got != "link:"+gitHashObject(t, root, "/etc") {
		t.Fatalf("symlink hashed as %s, not as its target text", got)
	}
	if id := gitHashObject(t, root, "{}"); m.Files["//tsconfig.base.json"] != id || m.Global["tsconfig.base.json"] != id {
		t.Fatalf("root file missing: files %v global %v", m.Files, m.Global)
	}

	// The default inputs follow the same rules.
	task.Inputs = nil
	files, err = h.Inputs(context.Background(), p, task)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"etc-link", "src/main.ts"}; !reflect.DeepEqual(files, want) {
		t.Fatalf("default inputs %v, want %v", files, want)
	}
}

// TestRootProjectInputs: the root project's default inputs are the root's own files, not its
// packages'.
func TestRootProjectInputs(t *testing.T) {
	root := t.TempDir()
	write(t, root, "package.json", "{}")
	write(t, root, "scripts/lint.sh", "lint")
	write(t, root, "packages/a/a.ts", "a")
	gitRepo(t, root)
	ws := &graph.Workspace{Root: root, CacheDir: filepath.Join(root, ".vx"), Projects: []*graph.Project{
		{Name: "root", Dir: ".", AbsDir: root},
		{Name: "a", Dir: "packages/a", AbsDir: filepath.Join(root, "packages/a")},
	}}
	ws.Index()
	p, _ := ws.Project("root")
	files, err := New(Options{Workspace: ws}).Inputs(context.Background(), p, &graph.Task{ID: "root#lint"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"package.json", "scripts/lint.sh"}; !reflect.DeepEqual(files, want) {
		t.Fatalf("root inputs %v, want %v", files, want)
	}
}

// A secret's value never reaches the stored manifest or the debug output, even where the task's
// env also lists its variable; the key is the same in every checkout (whatever its salt), and the
// stored digest differs between salts.
func TestSecretInEnvStaysSecret(t *testing.T) {
	root := t.TempDir()
	write(t, root, "p/a.txt", "a")
	p := &graph.Project{Name: "p", Dir: "p", AbsDir: filepath.Join(root, "p")}
	task := &graph.Task{ID: "p#t", Command: "echo", Inputs: []string{}, Env: []string{"TOK", "COPY"},
		ExecEnv: map[string]graph.EnvValue{"TOKEN": {Secret: "TOK"}}}
	ws := &graph.Workspace{Root: root, Projects: []*graph.Project{p}}
	p.Tasks = map[string]*graph.Task{"t": task}
	ws.Index()
	env := map[string]string{"TOK": "hunter2-weak", "COPY": "hunter2-weak"}
	var keys, stored []string
	for _, salt := range []string{"salt-one-0123456789", "salt-two-0123456789"} {
		var debug strings.Builder
		h := New(Options{Workspace: ws, Salt: []byte(salt), Debug: &debug, Getenv: func(k string) string { return env[k] }})
		m, err := h.Manifest(context.Background(), p, task, nil)
		if err != nil {
			t.Fatal(err)
		}
		key, data, _ := m.Key()
		for _, where := range []string{string(data), debug.String()} {
			if strings.Contains(where, "hunter2") || strings.Contains(where, HashBytes([]byte("hunter2-weak"))) ||
				strings.Contains(where, secretKeyDigest("hunter2-weak")) {
				t.Fatalf("the secret (or a digest of it without salt) was written: %s", where)
			}
		}
		keys, stored = append(keys, key), append(stored, string(data))
	}
	if keys[0] != keys[1] || stored[0] == stored[1] {
		t.Fatalf("keys %v (want equal), stored manifests equal: %v", keys, stored[0] == stored[1])
	}
}

// '$default' among the inputs is every file of the project, less the exclusions, plus the globs.
func TestDefaultInputsExtended(t *testing.T) {
	root := t.TempDir()
	write(t, root, "tsconfig.base.json", "{}")
	write(t, root, "p/src/a.ts", "a")
	write(t, root, "p/README.md", "r")
	write(t, root, "p/tests/a.test.ts", "t")
	gitRepo(t, root)
	ws := &graph.Workspace{Root: root, Projects: []*graph.Project{{Name: "p", Dir: "p", AbsDir: filepath.Join(root, "p")}}}
	ws.Index()
	p, _ := ws.Project("p")
	task := &graph.Task{ID: "p#build", Inputs: []string{"$default", "!**/*.md", "!tests/**", "//tsconfig.base.json"}}
	files, err := New(Options{Workspace: ws}).Inputs(context.Background(), p, task)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"//tsconfig.base.json", "src/a.ts"}; !reflect.DeepEqual(files, want) {
		t.Fatalf("inputs %v, want %v", files, want)
	}
}

// nestedDirs finds the projects inside each project, and only those: a sibling whose name only
// starts with another's ("a-b" beside "a") is not inside it, and the root holds every other.
func TestNestedDirs(t *testing.T) {
	got := nestedDirs([]string{"a/c", "a-b", ".", "a", "a/c/d", "b", "a"})
	want := map[string]map[string]bool{
		".":   {"a": true, "a-b": true, "a/c": true, "a/c/d": true, "b": true},
		"a":   {"a/c": true, "a/c/d": true},
		"a/c": {"a/c/d": true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("nestedDirs = %v, want %v", got, want)
	}
}
