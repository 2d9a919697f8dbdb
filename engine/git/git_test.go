package git

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
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
