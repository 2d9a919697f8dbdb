package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
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
	left, err := undeclaredOutputs(context.Background(), dir, time.Now().Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(left, []string{"dist/", "tsconfig.tsbuildinfo"}) {
		t.Errorf("left = %q, want dist/ and tsconfig.tsbuildinfo", left)
	}
	w := undeclaredWarning("app#build", left)
	if !strings.Contains(w, "add outputs: ['dist/**', 'tsconfig.tsbuildinfo']") || strings.Contains(w, "\n") {
		t.Errorf("warning: %q", w)
	}
	if left, _ := undeclaredOutputs(context.Background(), dir, time.Now().Add(time.Minute)); len(left) != 0 {
		t.Errorf("files older than the run named: %q", left)
	}
}

// BenchmarkUndeclaredCheck measures the check a miss of a task without outputs pays (one git call
// and a stat per ignored entry) beside the cheapest command a miss runs (sh -c true): the figure
// for "at most 5% of a miss".
func BenchmarkUndeclaredCheck(b *testing.B) {
	dir := undeclaredRepo(b)
	since := time.Now().Add(-time.Minute)
	b.Run("check", func(b *testing.B) {
		for b.Loop() {
			if _, err := undeclaredOutputs(context.Background(), dir, since); err != nil {
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
