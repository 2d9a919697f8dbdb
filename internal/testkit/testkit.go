// Package testkit holds the helpers the tests of several packages share: a file tree laid out
// from a map (in a git repository of one commit, if need be), and a buffer a child process and a
// test can share.
package testkit

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vzn/vx/engine/graph"
)

// WriteTree lays out files (slash path → text) under root, making folders as needed.
func WriteTree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TempTree lays out files under a new temporary folder and answers it.
func TempTree(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	WriteTree(t, root, files)
	return root
}

// TempRepo lays out files under a new temporary folder, makes it a git repository on branch main
// whose one commit holds them, and answers its path with symlinks resolved.
func TempRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(TempTree(t, files))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=vx", "-c", "user.email=vx@example.com", "commit", "-q", "-m", "first"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return root
}

// SyncBuffer is a bytes.Buffer that a copying goroutine (a child's stderr) and a test may share.
// Ready, when made with NewSyncBuffer, is closed once the buffer holds the text asked for.
type SyncBuffer struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	readyText string
	ready     chan struct{}
}

// NewSyncBuffer returns a buffer whose Ready channel closes once it holds readyText.
func NewSyncBuffer(readyText string) *SyncBuffer {
	return &SyncBuffer{readyText: readyText, ready: make(chan struct{})}
}

// Write implements io.Writer.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	if b.readyText != "" && strings.Contains(b.buf.String(), b.readyText) {
		b.readyText = ""
		close(b.ready)
	}
	return n, err
}

// String answers what was written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Ready is closed once the buffer holds the text NewSyncBuffer was given; nil for a zero buffer.
func (b *SyncBuffer) Ready() <-chan struct{} { return b.ready }

// CopyFile copies the file from to a new or truncated file to, with mode (an executable copied
// to run as another user, an index copied aside).
func CopyFile(t testing.TB, from, to string, mode os.FileMode) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// BuildWorkspace is a resolved workspace at /ws of one project per name (in packages/NAME), each
// with a cached `build` task (`tsc`, outputs dist/**), indexed: the fixture of tests that stamp
// or key a workspace without running anything.
func BuildWorkspace(names ...string) *graph.Workspace {
	ws := &graph.Workspace{Root: "/ws", CacheDir: "/ws/.vx"}
	for _, name := range names {
		p := &graph.Project{Name: name, Dir: "packages/" + name, Tasks: map[string]*graph.Task{}}
		p.Tasks["build"] = &graph.Task{ID: name + "#build", Project: name, Name: "build", Cache: true,
			Command: "tsc", Outputs: []string{"dist/**"}, DependsOn: []string{}}
		ws.Projects = append(ws.Projects, p)
	}
	ws.Index()
	return ws
}

// IsolateCacheHome points XDG_CACHE_HOME (and, for Windows, LocalAppData) at a new temporary
// folder for this test process and every vx it starts, so that no test writes into the user's
// cache folder, where vx keeps each repository's shared store by default; Go's build cache
// (keepGoCache) and ToolDir stay the user's. A TestMain calls it before m.Run and the answered
// function once the tests ended; it removes the folder.
func IsolateCacheHome() (cleanup func()) {
	dir, err := os.MkdirTemp("", "vx-test-cache-")
	if err != nil {
		panic(err)
	}
	keepGoCache()
	if os.Getenv(outerCacheEnv) == "" {
		if outer, err := os.UserCacheDir(); err == nil {
			if err := os.Setenv(outerCacheEnv, outer); err != nil {
				panic(err)
			}
		}
	}
	for _, k := range []string{"XDG_CACHE_HOME", "LocalAppData"} {
		if err := os.Setenv(k, dir); err != nil {
			panic(err)
		}
	}
	return func() { removeAll(dir) }
}

// keepGoCache sets GOCACHE, when unset, to the build cache the go command uses now: Go finds
// its default under XDG_CACHE_HOME, and a go build in a test (vx without the race detector, a
// server to test against) would otherwise compile everything again into an empty cache. Without
// a go command there is nothing to keep.
func keepGoCache() {
	if os.Getenv("GOCACHE") != "" {
		return
	}
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if gocache := strings.TrimSpace(string(out)); err == nil && gocache != "" {
		if err := os.Setenv("GOCACHE", gocache); err != nil {
			panic(err)
		}
	}
}

// raceExitSleep is the GORACE option ShortenRaceExit sets: a race-enabled process sleeps this
// long when it exits, a window in which a race another thread is reporting still gets printed.
const raceExitSleep = "atexit_sleep_ms=10"

// ShortenRaceExit sets GORACE's atexit_sleep_ms, for this test process and every process it
// starts, to 10 ms unless GORACE already names it. A race-enabled binary sleeps atexit_sleep_ms
// (a second by default) at every exit, and tests that start the race-enabled test binary as vx
// start it hundreds of times; the detector itself is unchanged, and a race it found still fails
// the process (exit status 66). A TestMain calls it before m.Run.
func ShortenRaceExit() {
	opts := os.Getenv("GORACE")
	if strings.Contains(opts, "atexit_sleep_ms=") {
		return
	}
	if err := os.Setenv("GORACE", strings.TrimSpace(opts+" "+raceExitSleep)); err != nil {
		panic(err)
	}
}

// removeAll removes dir, making read-only folders (a test's read-only store) writable first.
func removeAll(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}
