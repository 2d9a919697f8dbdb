package git

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Head reads what git rev-parse and git symbolic-ref answer, in a checkout, a worktree, with a
// packed ref and detached.
func TestHeadIsWhatGitSays(t *testing.T) {
	dir := t.TempDir()
	git := func(d string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
		cmd.Dir = d
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	check := func(d, wantBranch string) {
		t.Helper()
		commit, branch, err := Head(filepath.Join(d, "sub"))
		if err != nil {
			t.Fatal(err)
		}
		if want := git(d, "rev-parse", "HEAD"); commit != want || branch != wantBranch {
			t.Fatalf("Head(%s) = %q %q, want %q %q", d, commit, branch, want, wantBranch)
		}
	}
	git(dir, "init", "-q", "-b", "main")
	git(dir, "commit", "-q", "--allow-empty", "-m", "one")
	git(dir, "commit", "-q", "--allow-empty", "-m", "two")
	check(dir, "main")
	git(dir, "pack-refs", "--all")
	check(dir, "main")
	wt := filepath.Join(t.TempDir(), "wt")
	git(dir, "worktree", "add", "-q", "-b", "side", wt)
	git(wt, "commit", "-q", "--allow-empty", "-m", "three")
	check(wt, "side")
	git(dir, "checkout", "-q", "--detach", "HEAD~1")
	check(dir, "")
	if _, _, err := Head(t.TempDir()); err == nil {
		t.Fatal("Head outside a repository: no error")
	}
}
