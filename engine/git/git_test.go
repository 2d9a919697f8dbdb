package git

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/vzn/vx/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"config", "user.email", "t@example.com"},
		{"config", "user.name", "t"},
	} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func TestRunAnswersStdout(t *testing.T) {
	dir := gitRepo(t)
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := Run(context.Background(), dir, "status", "--porcelain")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out) != "?? a.txt" {
		t.Fatalf("status: %q", out)
	}
}

func TestRunFailureCarriesGitsMessage(t *testing.T) {
	dir := gitRepo(t)
	_, err := Run(context.Background(), dir, "rev-parse", "--verify", "no-such-ref")
	if err == nil {
		t.Fatal("rev-parse of a missing ref succeeded")
	}
	msg := err.Error()
	if !strings.Contains(msg, "git rev-parse --verify no-such-ref: exit 128") {
		t.Fatalf("error does not name the command and exit status: %q", msg)
	}
	if !strings.Contains(msg, "fatal:") {
		t.Fatalf("error does not carry git's own message: %q", msg)
	}
}

func TestRunOutsideARepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	if _, err := Run(context.Background(), dir, "rev-parse", "--show-toplevel"); err == nil {
		t.Fatal("rev-parse outside a repository succeeded")
	}
}

func TestRunCancelled(t *testing.T) {
	dir := gitRepo(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, dir, "status"); err == nil {
		t.Fatal("a cancelled git run succeeded")
	}
}

func TestRunMissingDir(t *testing.T) {
	if _, err := Run(context.Background(), filepath.Join(t.TempDir(), "gone"), "status"); err == nil {
		t.Fatal("git in a missing folder succeeded")
	}
}

// TestIgnoreChecker: one git process answers each path as git's exclude rules do: ignored by a
// pattern, by a folder excluded above it, re-included by a negated pattern, never when tracked;
// outside a work tree it answers an error.
func TestIgnoreChecker(t *testing.T) {
	dir := gitRepo(t)
	testkit.WriteTree(t, dir, map[string]string{".gitignore": "dist/\nout/*\n!out/keep.js\n*.log\n", "tracked.log": "x"})
	if out, err := exec.Command("git", "-C", dir, "add", "-f", "tracked.log").CombinedOutput(); err != nil {
		t.Fatalf("git add: %v\n%s", err, out)
	}
	c := StartIgnoreChecker(context.Background(), dir)
	paths := []string{"dist/index.js", "a/dist/deep/x.js", "out/x.js", "out/keep.js", "src/a.ts", "b.log", "tracked.log", "with space/and\nnewline.txt"}
	got, err := c.Ignored(paths)
	if err != nil {
		t.Fatal(err)
	}
	want := []bool{true, true, true, false, false, true, false, false}
	for i, p := range paths {
		if got[i] != want[i] {
			t.Errorf("%q ignored: %v, want %v", p, got[i], want[i])
		}
	}
	if again, err := c.Ignored([]string{"src/b.ts", "dist/b.js"}); err != nil || again[0] || !again[1] {
		t.Errorf("a second question: %v %v", again, err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("close: %v", err)
	}

	// Many questions at once, far more than a pipe holds and one longer than a batch, answered
	// each in its place: the batches are written whole and read back in order.
	c = StartIgnoreChecker(context.Background(), dir)
	var many []string
	var manyWant []bool
	for i := range 3000 {
		dirName := "src"
		if i%3 == 0 {
			dirName = "dist"
		}
		many = append(many, fmt.Sprintf("packages/p%04d/%s/%s-%d.js", i, dirName, strings.Repeat("n", i%50), i))
		manyWant = append(manyWant, i%3 == 0)
	}
	long := "src/" + strings.Repeat("l", askBytes+10) + ".log"
	many = append(many, long, "src/after-the-long-one.ts")
	manyWant = append(manyWant, true, false)
	got, err = c.Ignored(many)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range many {
		if got[i] != manyWant[i] {
			t.Fatalf("%.80q ignored: %v, want %v", p, got[i], manyWant[i])
		}
	}
	if err := c.Close(); err != nil {
		t.Errorf("close: %v", err)
	}

	outside := StartIgnoreChecker(context.Background(), t.TempDir())
	if _, err := outside.Ignored([]string{"a.js"}); err == nil {
		t.Error("outside a work tree: no error")
	}
	_ = outside.Close()
}
