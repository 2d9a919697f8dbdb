package statedirs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestResolvePrecedence checks each source in turn: flag over VX_CACHE_DIR over the config over
// the default, relative paths from the root, and VX_STATE_DIR moving only the checkout's folder.
func TestResolvePrecedence(t *testing.T) {
	root := t.TempDir()
	cases := []struct {
		name             string
		in               Input
		shared, checkout string
		sharedSrc, ckSrc Source
	}{
		{"default", Input{Getenv: env(map[string]string{"XDG_CACHE_HOME": "/xdg"})},
			"/xdg/vx/" + RepositoryID(root), filepath.Join(root, ".vx"), SourceDefault, SourceDefault},
		{"config", Input{Config: "store", Getenv: env(map[string]string{"XDG_CACHE_HOME": "/xdg"})},
			filepath.Join(root, "store"), filepath.Join(root, ".vx"), SourceConfig, SourceDefault},
		{"env over config", Input{Config: "store", Getenv: env(map[string]string{CacheDirEnv: "/e"})},
			"/e", filepath.Join(root, ".vx"), SourceEnv, SourceDefault},
		{"flag over env", Input{Flag: "f", Config: "store", Getenv: env(map[string]string{CacheDirEnv: "/e"})},
			filepath.Join(root, "f"), filepath.Join(root, ".vx"), SourceFlag, SourceDefault},
		{"state dir", Input{Flag: "/f", Getenv: env(map[string]string{StateDirEnv: "st"})},
			"/f", filepath.Join(root, "st"), SourceFlag, SourceEnv},
	}
	cases = append(cases, struct {
		name             string
		in               Input
		shared, checkout string
		sharedSrc, ckSrc Source
	}{"no user cache folder", Input{Getenv: env(nil)}, filepath.Join(root, ".vx"), filepath.Join(root, ".vx"), SourceNoUserCache, SourceDefault})
	for _, c := range cases {
		c.in.Root = root
		d := Resolve(c.in)
		if d.Shared != c.shared || d.Checkout != c.checkout || d.SharedSource != c.sharedSrc || d.CheckoutSource != c.ckSrc {
			t.Errorf("%s: got %+v, want shared %s (%s), checkout %s (%s)", c.name, d, c.shared, c.sharedSrc, c.checkout, c.ckSrc)
		}
	}
}

// TestUserCacheDir checks each platform's convention and the error without any.
func TestUserCacheDir(t *testing.T) {
	for _, c := range []struct {
		goos string
		env  map[string]string
		want string
	}{
		{"linux", map[string]string{"XDG_CACHE_HOME": "/x", "HOME": "/h"}, "/x"},
		{"linux", map[string]string{"XDG_CACHE_HOME": "rel", "HOME": "/h"}, "/h/.cache"},
		{"linux", map[string]string{"HOME": "/h"}, "/h/.cache"},
		{"darwin", map[string]string{"XDG_CACHE_HOME": "/x", "HOME": "/h"}, "/h/Library/Caches"},
		{"windows", map[string]string{"LocalAppData": `C:\L`}, `C:\L`},
	} {
		got, err := UserCacheDir(env(c.env), c.goos)
		if err != nil || got != c.want {
			t.Errorf("%s %v: got %q, %v; want %q", c.goos, c.env, got, err, c.want)
		}
	}
	if _, err := UserCacheDir(env(nil), "linux"); err == nil || !strings.Contains(err.Error(), "--cache-dir") {
		t.Errorf("no HOME: got %v, want an error naming --cache-dir", err)
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=vx", "GIT_AUTHOR_EMAIL=vx@example.com",
		"GIT_COMMITTER_NAME=vx", "GIT_COMMITTER_EMAIL=vx@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestRepositoryIDWorktrees checks, against real git, that a worktree and its main checkout (and a
// workspace in a subfolder of either) share an id, that GitCommonDir answers what git does, and
// that a clone and a folder outside git each get their own.
func TestRepositoryIDWorktrees(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	top := t.TempDir()
	main := filepath.Join(top, "main")
	if err := os.MkdirAll(filepath.Join(main, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(main, "sub", "f"), []byte("x"), 0o644)
	git(t, main, "init", "-q", "-b", "main")
	git(t, main, "add", "-A")
	git(t, main, "commit", "-q", "-m", "one")
	wt := filepath.Join(top, "wt")
	git(t, main, "worktree", "add", "-q", wt)
	clone := filepath.Join(top, "clone")
	git(t, top, "clone", "-q", main, clone)

	for _, dir := range []string{main, wt, filepath.Join(wt, "sub")} {
		got, err := GitCommonDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		want := git(t, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
		if got != want {
			t.Errorf("GitCommonDir(%s) = %s, git says %s", dir, got, want)
		}
	}
	id := RepositoryID(main)
	if !strings.HasPrefix(id, "main-") {
		t.Errorf("RepositoryID(main) = %s, want it to start with the repository's folder name", id)
	}
	for _, dir := range []string{wt, filepath.Join(wt, "sub"), filepath.Join(main, "sub")} {
		if got := RepositoryID(dir); got != id {
			t.Errorf("RepositoryID(%s) = %s, want %s (the main checkout's)", dir, got, id)
		}
	}
	if got := RepositoryID(clone); got == id {
		t.Errorf("a clone shares the id %s of the repository it was cloned from", id)
	}
	plain := t.TempDir()
	if RepositoryID(plain) == RepositoryID(t.TempDir()) {
		t.Errorf("two folders outside git share an id")
	}
	// Through a symlink, the same repository.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(main, link); err != nil {
		t.Fatal(err)
	}
	if got := RepositoryID(link); got != id {
		t.Errorf("RepositoryID through a symlink = %s, want %s", got, id)
	}
}
