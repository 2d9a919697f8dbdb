package testkit

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// ShortenRaceExit adds the short exit sleep to what GORACE holds, and leaves a GORACE that names
// its own exit sleep alone.
func TestShortenRaceExit(t *testing.T) {
	for _, c := range []struct{ before, after string }{
		{"", "atexit_sleep_ms=10"},
		{"halt_on_error=1", "halt_on_error=1 atexit_sleep_ms=10"},
		{"atexit_sleep_ms=500 halt_on_error=1", "atexit_sleep_ms=500 halt_on_error=1"},
	} {
		t.Setenv("GORACE", c.before)
		ShortenRaceExit()
		if got := os.Getenv("GORACE"); got != c.after {
			t.Errorf("GORACE %q: ShortenRaceExit made it %q, want %q", c.before, got, c.after)
		}
	}
}

// IsolateCacheHome moves the cache home but not Go's build cache, which a go build in a test
// would otherwise fill from nothing.
func TestIsolateCacheHomeKeepsGoCache(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	gocache := strings.TrimSpace(string(out))
	before, _ := os.UserCacheDir()
	for _, k := range []string{"XDG_CACHE_HOME", "LocalAppData", "GOCACHE"} {
		t.Setenv(k, os.Getenv(k))
	}
	os.Unsetenv("GOCACHE")
	cleanup := IsolateCacheHome()
	defer cleanup()
	if got := os.Getenv("GOCACHE"); got != gocache {
		t.Errorf("GOCACHE = %q after IsolateCacheHome, want the go command's %q", got, gocache)
	}
	if got, _ := os.UserCacheDir(); got == before {
		t.Errorf("the cache home is still %q", got)
	}
}

// ToolDir stays in the user's cache folder when IsolateCacheHome moved the cache home, so that the
// test binaries of a run, and the next run, share what they built there.
func TestToolDirOutlivesIsolateCacheHome(t *testing.T) {
	toolDir := ToolDir(t)
	for _, k := range []string{"XDG_CACHE_HOME", "LocalAppData", "GOCACHE", outerCacheEnv} {
		t.Setenv(k, os.Getenv(k))
	}
	cleanup := IsolateCacheHome()
	defer cleanup()
	if got := ToolDir(t); got != toolDir {
		t.Errorf("ToolDir = %q after IsolateCacheHome, want %q", got, toolDir)
	}
}

// Binary builds a program of the checkout into ToolDir, where a second call finds it up to date
// and leaves the very file in place.
func TestBinaryIsBuiltOnce(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	bin := Binary(t, "cmd/vx-sandbox")
	if !strings.HasPrefix(bin, ToolDir(t)+string(os.PathSeparator)) {
		t.Errorf("Binary built %s, outside ToolDir %s", bin, ToolDir(t))
	}
	before, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	again := Binary(t, "cmd/vx-sandbox")
	after, err := os.Stat(again)
	if err != nil {
		t.Fatal(err)
	}
	if again != bin || !os.SameFile(before, after) {
		t.Errorf("the second Binary made %s anew (first %s)", again, bin)
	}
}
