package testkit

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"testing"
)

// outerCacheEnv holds the cache home IsolateCacheHome replaced, so that ToolDir stays the one
// folder every test binary of a run (and the next run) shares.
const outerCacheEnv = "VXTEST_OUTER_CACHE_HOME"

// ToolDir answers the folder, outside the checkout and kept between runs, where tests keep what
// they build or install once: vx-test in the user's cache folder (the one the test process had
// before IsolateCacheHome gave it another).
func ToolDir(t testing.TB) string {
	t.Helper()
	base := os.Getenv(outerCacheEnv)
	if base == "" {
		var err error
		if base, err = os.UserCacheDir(); err != nil {
			base = os.TempDir()
		}
	}
	dir := filepath.Join(base, "vx-test")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// moduleRoot is the checkout holding this package (internal/testkit).
func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Binary answers the program of this checkout's main package pkg (a folder under the module,
// "cmd/vx"), built without the race detector and with CGO_ENABLED=0, as npm/build.sh builds the
// binaries vx ships (after it, only a link is left to do), into a folder of ToolDir kept for this
// checkout and that program, which only the user who ran the tests may be able to read. The test binaries of one run share it: a file lock lets one build at a time, and go
// build leaves a program that is up to date alone, so the first caller of a run builds (a link
// where nothing changed) and the others find it done.
func Binary(t testing.TB, pkg string) string {
	t.Helper()
	root, err := filepath.Abs(moduleRoot())
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(root))
	// A folder of its own for each program: vx would take a vx-sandbox beside it for its helper.
	dir := filepath.Join(ToolDir(t), "bin", hex.EncodeToString(sum[:6]), path.Base(pkg))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	unlock := lockFile(t, filepath.Join(dir, ".lock"))
	defer unlock()
	bin := filepath.Join(dir, path.Base(pkg))
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	cmd := exec.Command("go", "build", "-o", bin, "./"+pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}
