package remote_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// scopes is the pull request's scenario against one real server: a pull request's run writes
// only its own scope, so the default branch's run never restores what it wrote; once the default
// branch wrote the trusted scope, another pull request's run restores from it and uploads
// nothing new, and a read-only run uploads nothing at all.
func scopes(t *testing.T, cfg string, env []string) {
	pr := vxRun(t, checkout(t, cfg, ""), append(env, "VX_CACHE_SCOPE=pr-7"), "build")
	mustPass(t, "pull request", pr)
	if rc := pr.sum.RemoteCache; rc == nil || rc.Uploads != 3 || rc.Scope != "pr-7" {
		t.Fatalf("pull request: want 3 uploads in scope pr-7, got %+v\n%s", rc, pr.stderr)
	}
	main := vxRun(t, checkout(t, cfg, ""), env, "build")
	mustPass(t, "main", main)
	if got := sources(main); got["run"] != 3 {
		t.Fatalf("main restored a pull request's entry: want 3 tasks run, got %v\n%s", got, main.stderr)
	}
	if rc := main.sum.RemoteCache; rc == nil || rc.Hits != 0 || rc.Uploads != 3 || rc.Scope != "" {
		t.Fatalf("main: want 0 hits and 3 uploads in the trusted scope, got %+v", rc)
	}
	again := vxRun(t, checkout(t, cfg, ""), env, "build", "--cache-scope", "pr-8")
	mustPass(t, "another pull request", again)
	if got := sources(again); got["remote"] != 3 {
		t.Fatalf("another pull request: want main's 3 entries restored, got %v\n%s", got, again.stderr)
	}
	laptop := vxRun(t, checkout(t, cfg, ""), append(env, "VX_CACHE_SCOPE=read-only"), "build", "--force")
	mustPass(t, "read-only", laptop)
	if rc := laptop.sum.RemoteCache; rc == nil || rc.Uploads != 0 || rc.Mode != "read" || rc.Scope != "read-only" {
		t.Fatalf("read-only: want no upload, got %+v", rc)
	}
	if w := append(warnings(pr), append(warnings(main), warnings(again)...)...); len(w) != 0 {
		t.Fatalf("warnings: %q", w)
	}
}

func TestBazelRemoteScopes(t *testing.T) {
	srv := startBazelRemote(t, "", "")
	scopes(t, bazelConfig(srv.URL, ""), nil)
}

func TestTurboScopes(t *testing.T) {
	srv := startDucktors(t, "turbo-token")
	scopes(t, turboConfig(srv.URL, ""), []string{"RC_TOKEN=turbo-token", "SIG_KEY=sign-me"})
}

// TestBazelRemoteReadOnlyCredentials is the boundary the docs name: bazel-remote with an htpasswd
// file and --allow_unauthenticated_reads. The default branch's run holds the password and writes;
// a pull request's run holds none: it restores the trusted entries, and its upload is refused by
// the server whatever scope it claims, after which it goes on reading.
func TestBazelRemoteReadOnlyCredentials(t *testing.T) {
	srv := startBazelRemote(t, "ci", "s3cret", "--allow_unauthenticated_reads")
	withPassword := strings.Replace(srv.URL, "http://", "http://ci:s3cret@", 1)
	main := vxRun(t, checkout(t, "", ""), []string{"VX_REMOTE_CACHE_URL=" + withPassword}, "build")
	mustPass(t, "main", main)
	if rc := main.sum.RemoteCache; rc == nil || rc.Uploads != 3 {
		t.Fatalf("main: want 3 uploads, got %+v\n%s", rc, main.stderr)
	}
	env := []string{"VX_REMOTE_CACHE_URL=" + srv.URL}
	prDir := checkout(t, "", "")
	if err := os.WriteFile(filepath.Join(prDir, "packages", "app", "src", "a.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pr := vxRun(t, prDir, append(env, "VX_CACHE_SCOPE=trusted"), "build")
	mustPass(t, "pull request", pr)
	if got := sources(pr); got["remote"] != 2 || got["run"] != 1 {
		t.Fatalf("pull request without a password: want lib and mid from main, app run, got %v\n%s", got, pr.stderr)
	}
	w := warnings(pr)
	if rc := pr.sum.RemoteCache; rc == nil || rc.Uploads != 0 || rc.Errors != 1 || len(w) != 1 ||
		!strings.Contains(w[0], "upload refused") || !strings.Contains(w[0], "reading only for the rest of this run") {
		t.Fatalf("pull request without a password: want its one upload refused, got %+v %q", rc, w)
	}
}

// TestTurboReadOnlyInstance is the other boundary the docs name: a second turborepo-remote-cache
// with READ_ONLY=true on the default branch's storage, for pull requests. A pull request's run
// through it restores main's entries; its one upload is refused (403) and it goes on reading.
func TestTurboReadOnlyInstance(t *testing.T) {
	storage := t.TempDir()
	trusted := startDucktorsOn(t, "turbo-token", storage)
	env := []string{"RC_TOKEN=turbo-token", "SIG_KEY=sign-me"}
	mustPass(t, "main", vxRun(t, checkout(t, turboConfig(trusted.URL, ""), ""), env, "build"))
	readOnly := startDucktorsOn(t, "turbo-token", storage, "READ_ONLY=true")
	prDir := checkout(t, turboConfig(readOnly.URL, ""), "")
	if err := os.WriteFile(filepath.Join(prDir, "packages", "app", "src", "a.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pr := vxRun(t, prDir, append(env, "VX_CACHE_SCOPE=trusted"), "build")
	mustPass(t, "pull request", pr)
	if got := sources(pr); got["remote"] != 2 || got["run"] != 1 {
		t.Fatalf("pull request: want lib and mid from main, app run, got %v\n%s", got, pr.stderr)
	}
	w := warnings(pr)
	if rc := pr.sum.RemoteCache; rc == nil || rc.Uploads != 0 || rc.Errors != 1 || len(w) != 1 ||
		!strings.Contains(w[0], "403") || !strings.Contains(w[0], "reading only for the rest of this run") {
		t.Fatalf("pull request: want its one upload refused, got %+v %q", rc, w)
	}
}
