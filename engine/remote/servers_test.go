package remote_test

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vzn/vx/internal/testkit"
)

// The servers the tests start, at the versions the issue names.
const (
	bazelRemoteVersion = "v2.6.2"
	ducktorsVersion    = "2.12.0"
)

// repoRoot is the vx checkout holding this package.
func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// toolDir is where the servers are built and installed: outside the checkout, kept between runs so
// that a second run pays seconds (testkit.ToolDir, which TestMain's isolated cache home leaves
// alone).
func toolDir(t testing.TB) string {
	t.Helper()
	return testkit.ToolDir(t)
}

var (
	bazelRemoteOnce   sync.Once
	bazelRemoteBin    string
	bazelRemoteBinErr error
)

// vxBinary answers vx, built once for every test of the run (testkit.Binary).
func vxBinary(t testing.TB) string {
	t.Helper()
	return testkit.Binary(t, "cmd/vx")
}

// bazelRemoteBinary builds bazel-remote from its module (stress/remote/bazelremote pins it), once;
// the binary stays in the user's cache folder.
func bazelRemoteBinary(t testing.TB) string {
	t.Helper()
	bazelRemoteOnce.Do(func() {
		bin := filepath.Join(toolDir(t), "bazel-remote-"+bazelRemoteVersion)
		if _, err := os.Stat(bin); err == nil {
			bazelRemoteBin = bin
			return
		}
		tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
		cmd := exec.Command("go", "build", "-o", tmp, "github.com/buchgr/bazel-remote/v2")
		cmd.Dir = filepath.Join(repoRoot(t), "stress", "remote", "bazelremote")
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			bazelRemoteBinErr = fmt.Errorf("go build bazel-remote %s: %v\n%s", bazelRemoteVersion, err, out)
			return
		}
		if err := os.Rename(tmp, bin); err != nil {
			bazelRemoteBinErr = err
			return
		}
		bazelRemoteBin = bin
	})
	if bazelRemoteBinErr != nil {
		t.Fatal(bazelRemoteBinErr)
	}
	return bazelRemoteBin
}

// ducktorsCLI installs ducktors/turborepo-remote-cache from npm, once, and answers its CLI; the test
// is skipped where Node or npm is missing.
func ducktorsCLI(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the Turborepo API server (ducktors/turborepo-remote-cache) tests need it; the bazel-remote tests still run")
	}
	dir := filepath.Join(toolDir(t), "ducktors-"+ducktorsVersion)
	cli := filepath.Join(dir, "node_modules", "turborepo-remote-cache", "dist", "cli.js")
	if _, err := os.Stat(cli); err == nil {
		return cli
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed: cannot install ducktors/turborepo-remote-cache; the bazel-remote tests still run")
	}
	// Installed aside and renamed into place, so that a test binary (of this run or another
	// checkout's) never finds it half installed.
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".*.tmp")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", tmp, "turborepo-remote-cache@"+ducktorsVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install turborepo-remote-cache@%s: %v\n%s", ducktorsVersion, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(cli); statErr != nil {
			t.Fatalf("install turborepo-remote-cache: %v", err)
		}
	}
	return cli
}

// freePort answers a port on 127.0.0.1 that nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// server is a real cache server the test started; Stop kills it (also at the test's end).
type server struct {
	URL string
	// Dir is the server's storage folder.
	Dir  string
	cmd  *exec.Cmd
	done chan struct{}
	log  *lockedWriter
}

// Stop kills the server and waits for it.
func (s *server) Stop() {
	if s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-s.done
}

// startServer starts a server process in its own group and waits until probe answers.
func startServer(t testing.TB, cmd *exec.Cmd, url string, probe func() bool) *server {
	t.Helper()
	var log strings.Builder
	out := &lockedWriter{w: &log}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{URL: url, cmd: cmd, done: make(chan struct{}), log: out}
	go func() {
		_ = cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(s.Stop)
	deadline := time.Now().Add(30 * time.Second)
	for !probe() {
		select {
		case <-s.done:
			t.Fatalf("%s exited at start:\n%s", cmd.Path, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer within 30s", cmd.Path)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return s
}

type lockedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// answers reports whether an HTTP server answers a request at u at all.
func answers(u string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodHead, u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

// startBazelRemote starts bazel-remote on a free port with a temporary folder; with user and
// password it requires them (an htpasswd file); extra are more of its flags.
func startBazelRemote(t testing.TB, user, password string, extra ...string) *server {
	t.Helper()
	bin := bazelRemoteBinary(t)
	dir := t.TempDir()
	port := freePort(t)
	args := []string{"--dir", filepath.Join(dir, "data"), "--max_size", "1",
		"--http_address", fmt.Sprintf("127.0.0.1:%d", port), "--grpc_address", "none"}
	if user != "" {
		sum := sha1.Sum([]byte(password))
		htpasswd := filepath.Join(dir, "htpasswd")
		line := user + ":{SHA}" + base64.StdEncoding.EncodeToString(sum[:]) + "\n"
		if err := os.WriteFile(htpasswd, []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--htpasswd_file", htpasswd)
	}
	args = append(args, extra...)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	s := startServer(t, exec.Command(bin, args...), url, func() bool { return answers(url + "/status") })
	s.Dir = filepath.Join(dir, "data")
	return s
}

// startDucktors starts ducktors/turborepo-remote-cache on a free port with local storage in a
// temporary folder, accepting token; it stores the x-artifact-tag of each artifact.
func startDucktors(t testing.TB, token string) *server {
	t.Helper()
	return startDucktorsOn(t, token, t.TempDir())
}

// startDucktorsOn starts ducktors/turborepo-remote-cache as startDucktors does, on the storage
// folder given, with extra more of its environment (READ_ONLY=true).
func startDucktorsOn(t testing.TB, token, storage string, extra ...string) *server {
	t.Helper()
	cli := ducktorsCLI(t)
	port := freePort(t)
	cmd := exec.Command("node", cli)
	cmd.Env = append(os.Environ(), extra...)
	cmd.Env = append(cmd.Env, fmt.Sprintf("PORT=%d", port), "HOST=127.0.0.1", "TURBO_TOKEN="+token,
		"STORAGE_PROVIDER=local", "STORAGE_PATH="+storage, "STORAGE_PATH_USE_TMP_FOLDER=false",
		"TURBO_REMOTE_CACHE_SIGNATURE_KEY=stored-tags", "LOG_LEVEL=warn", "NODE_ENV=production")
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	s := startServer(t, cmd, url, func() bool { return answers(url + "/v8/artifacts/status") })
	s.Dir = storage
	return s
}
