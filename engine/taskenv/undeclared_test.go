package taskenv

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/pathglob"
)

// undeclaredRepo makes a git repository whose project folder holds an ignored dist/ and
// node_modules/ and a tracked source file.
func undeclaredRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	write := func(rel, text string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".gitignore", "dist/\nnode_modules/\n*.tsbuildinfo\nold.log\n")
	write("src/index.ts", "export {}")
	write("old.log", "from before")
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "old.log"), old, old); err != nil {
		t.Fatal(err)
	}
	write("node_modules/x/index.js", "x")
	write("dist/index.js", "built")
	write("tsconfig.tsbuildinfo", "{}")
	return dir
}

// TestUndeclaredOutputs: the git-ignored entries written since the task started are named (a
// folder once), node_modules and older ignored files are not.
func TestUndeclaredOutputs(t *testing.T) {
	dir := undeclaredRepo(t)
	check := []undeclaredCheck{{taskID: "app#build", dir: ".", since: time.Now().Add(-time.Minute)}}
	left, err := undeclaredOutputs(context.Background(), dir, []string{"."}, check, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(left["app#build"], []string{"dist/", "tsconfig.tsbuildinfo"}) {
		t.Errorf("left = %q, want dist/ and tsconfig.tsbuildinfo", left)
	}
	w := undeclaredWarning("app#build", left["app#build"])
	if !strings.Contains(w, "add outputs: ['dist/**', 'tsconfig.tsbuildinfo']") || strings.Contains(w, "\n") {
		t.Errorf("warning: %q", w)
	}
	check[0].since = time.Now().Add(time.Minute)
	if left, _ := undeclaredOutputs(context.Background(), dir, []string{"."}, check, nil); len(left) != 0 {
		t.Errorf("files older than the run named: %q", left)
	}
}

// One git call answers every task of a run: an entry is the innermost project's (a nested
// project's dist is not its parent's), and of the task that started last before it was written.
func TestUndeclaredOutputsOfSeveralTasks(t *testing.T) {
	dir := undeclaredRepo(t)
	for _, rel := range []string{"packages/app/dist/a.js", "packages/app/out.tsbuildinfo", "packages/lib/dist/l.js"} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	old := now.Add(-10 * time.Minute)
	for _, rel := range []string{"packages/app/out.tsbuildinfo", "packages/app/dist", "dist", "tsconfig.tsbuildinfo"} {
		if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(rel)), old, old); err != nil {
			t.Fatal(err)
		}
	}
	dirs := []string{".", "packages/app", "packages/lib"}
	checks := []undeclaredCheck{
		{taskID: "root#build", dir: ".", since: now.Add(-time.Hour)},
		{taskID: "app#build", dir: "packages/app", since: now.Add(-time.Hour)},
		{taskID: "app#test", dir: "packages/app", since: now.Add(-20 * time.Minute)},
		{taskID: "lib#build", dir: "packages/lib", since: now.Add(-time.Minute)},
	}
	left, err := undeclaredOutputs(context.Background(), dir, dirs, checks, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"root#build": {"dist/", "tsconfig.tsbuildinfo"},
		"app#test":   {"dist/", "out.tsbuildinfo"},
		"lib#build":  {"dist/"},
	}
	for id, w := range want {
		if !slices.Equal(left[id], w) {
			t.Errorf("%s left %q, want %q", id, left[id], w)
		}
	}
	if len(left["app#build"]) != 0 {
		t.Errorf("app#build, which started before app#test, left %q", left["app#build"])
	}

	// A folder another task of the project declares as its output is that task's: a test that
	// runs right after the build (within the clock's slack) did not leave the build's dist/.
	lib, err := pathglob.NewSet("packages/lib", []string{"dist/**"})
	if err != nil {
		t.Fatal(err)
	}
	left, err = undeclaredOutputs(context.Background(), dir, dirs, checks, map[string]*pathglob.Set{"packages/lib": lib})
	if err != nil {
		t.Fatal(err)
	}
	if len(left["lib#build"]) != 0 || !slices.Equal(left["app#test"], want["app#test"]) {
		t.Errorf("with lib's dist/** declared by another task: lib %q, app %q", left["lib#build"], left["app#test"])
	}
}

// BenchmarkUndeclaredCheck measures the check a run pays for its misses of tasks without outputs
// (one git call for all of them, and a stat per ignored entry) beside the cheapest command a miss
// runs (sh -c true). stress/peers/undeclared.sh measures it against whole runs.
func BenchmarkUndeclaredCheck(b *testing.B) {
	dir := undeclaredRepo(b)
	check := []undeclaredCheck{{taskID: "app#build", dir: ".", since: time.Now().Add(-time.Minute)}}
	b.Run("check", func(b *testing.B) {
		for b.Loop() {
			if _, err := undeclaredOutputs(context.Background(), dir, []string{"."}, check, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sh-true", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("sh", "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
