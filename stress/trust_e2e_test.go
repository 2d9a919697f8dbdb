package stress

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// TestTrustEndToEnd tries, against a built vx, each hole "Trust, round 2" closed, as an attacker
// would: a shared cache entry that plants a symlink, one rejected halfway, a server that trickles,
// a redirect that would carry the token, what a task inherits (environment and descriptors), the
// sandbox's read set under the usual PATH, two runs of one task at once, escapes in config text,
// and a config that grows a string until something stops it.
func TestTrustEndToEnd(t *testing.T) {
	bin := buildVX(t)
	t.Run("planted symlink", func(t *testing.T) { trustPlantedSymlink(t, bin) })
	t.Run("rejected entry", func(t *testing.T) { trustRejectedEntry(t, bin) })
	t.Run("trickling server", func(t *testing.T) { trustTrickle(t, bin) })
	t.Run("redirect to another port", func(t *testing.T) { trustRedirect(t, bin) })
	t.Run("environment and descriptors", func(t *testing.T) { trustInherited(t, bin) })
	t.Run("sandbox read with the usual PATH", func(t *testing.T) { trustSandboxRead(t, bin) })
	t.Run("two runs at once", func(t *testing.T) { trustTwoRuns(t, bin) })
	t.Run("escapes in vx show", func(t *testing.T) { trustShowEscapes(t, bin) })
	t.Run("growing config", func(t *testing.T) { trustGrowingConfig(t, bin) })
}

const trustToken = "tok-e2e-5ecret"

// artifactServer is a Turborepo remote cache API server on loopback: it keeps what vx uploads,
// and serve, when set, answers a GET in its place.
type artifactServer struct {
	srv *httptest.Server

	mu     sync.Mutex
	bodies map[string][]byte
	auth   []string
	serve  func(w http.ResponseWriter, r *http.Request, body []byte)
}

func newArtifactServer(t *testing.T) *artifactServer {
	a := &artifactServer{bodies: map[string][]byte{}}
	a.srv = httptest.NewServer(http.HandlerFunc(a.handle))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *artifactServer) handle(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimPrefix(r.URL.Path, "/v8/artifacts/")
	a.mu.Lock()
	a.auth = append(a.auth, r.Header.Get("Authorization"))
	body, serve := a.bodies[key], a.serve
	a.mu.Unlock()
	switch r.Method {
	case http.MethodPut:
		data, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		a.mu.Lock()
		a.bodies[key] = data
		a.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	case http.MethodGet:
		if serve != nil {
			serve(w, r, body)
			return
		}
		if body == nil {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(body)
	default: // HEAD: the probe
		w.WriteHeader(http.StatusNotFound)
	}
}

// only answers the one artifact the server holds, failing the test unless there is exactly one.
func (a *artifactServer) only(t *testing.T) (string, []byte) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.bodies) != 1 {
		t.Fatalf("the server holds %d artifacts, want the one the honest run uploaded", len(a.bodies))
	}
	for k, v := range a.bodies {
		return k, v
	}
	return "", nil
}

// trustWorkspace lays out a git workspace with one project, packages/app, whose build is command.
func trustWorkspace(t *testing.T, command, extraTask string) string {
	t.Helper()
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "vx.workspace.ts"), fmt.Sprintf(`import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({
  projects: ['packages/*'],
  remoteCache: { url: 'http://127.0.0.1:9', protocol: 'turbo', team: 'team_vx', timeout: '1s' },
  tasks: {
    build: { command: %s, inputs: ['src/**'], outputs: ['dist/**'] },
    %s
  },
})
`, jsString(command), extraTask))
	writeFile(t, filepath.Join(ws, ".gitignore"), ".vx/\ndist/\n")
	writeFile(t, filepath.Join(ws, "packages/app/package.json"), `{ "name": "app" }`)
	writeFile(t, filepath.Join(ws, "packages/app/src/a.txt"), "source\n")
	gitCommitAll(t, ws)
	return ws
}

// jsString quotes s for a TypeScript source: JSON's escapes are JavaScript's.
func jsString(s string) string {
	data, _ := json.Marshal(s)
	return string(data)
}

func gitCommitAll(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, crashEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
}

// vxResult is one vx process's end.
type vxResult struct {
	stdout, stderr string
	err            error
	maxRSSBytes    int64
	took           time.Duration
}

// runVX runs vx in dir with env added to crashEnv, giving up after two minutes (a run that does
// not end is the failure the caller reports).
func runVX(t *testing.T, bin, dir string, env []string, args ...string) vxResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, append(crashEnv(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	res := vxResult{stdout: stdout.String(), stderr: stderr.String(), err: err, took: time.Since(start)}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.maxRSSBytes = int64(ru.Maxrss) << 10
	}
	if ctx.Err() != nil {
		t.Fatalf("vx %v did not end within two minutes; stderr:\n%s", args, res.stderr)
	}
	return res
}

// taskStatuses reads a run summary's statuses by task id.
func taskStatuses(t *testing.T, res vxResult) map[string]string {
	t.Helper()
	var sum struct {
		Tasks []struct {
			TaskID string `json:"taskId"`
			Status string `json:"status"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil {
		t.Fatalf("summary: %v\nstdout:\n%s\nstderr:\n%s", err, res.stdout, res.stderr)
	}
	out := map[string]string{}
	for _, task := range sum.Tasks {
		out[task.TaskID] = task.Status
	}
	return out
}

// The local store lives in the checkout's state folder, so that honestRun forgets it with .vx.
func remoteEnv(url string) []string {
	return []string{"VX_REMOTE_CACHE_URL=" + url, "VX_REMOTE_CACHE_TOKEN=" + trustToken, "VX_CACHE_DIR=.vx/store"}
}

// honestRun runs build once against srv, which then holds its artifact, and forgets the local
// cache, so that the next run asks the server.
func honestRun(t *testing.T, bin, ws string, srv *artifactServer) (key string, artifact []byte) {
	t.Helper()
	res := runVX(t, bin, ws, remoteEnv(srv.srv.URL), "run", "build", "--format", "json")
	if res.err != nil || taskStatuses(t, res)["app#build"] != "miss" {
		t.Fatalf("the honest run: %v\n%s\n%s", res.err, res.stdout, res.stderr)
	}
	key, artifact = srv.only(t)
	if err := os.RemoveAll(filepath.Join(ws, ".vx")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(ws, "packages/app/dist")); err != nil {
		t.Fatal(err)
	}
	return key, artifact
}

// archiveEntry is one member of a crafted outputs archive; content is what the archive holds,
// listed what the entry's listing says it holds (its hash and size).
type archiveEntry struct {
	path, link      string
	content, listed string
}

// craft rewrites an honest artifact (magic line, entry document, outputs blob, log blob) to carry
// the given outputs instead, with a listing that matches the blob it now holds.
func craft(t *testing.T, honest []byte, entries []archiveEntry) []byte {
	t.Helper()
	br := bufio.NewReader(bytes.NewReader(honest))
	magic, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(magic, "vx-remote-entry") {
		t.Fatalf("not a vx artifact: %q", magic)
	}
	metaLine, err := br.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal(metaLine, &meta); err != nil {
		t.Fatal(err)
	}
	outputsSize := int64(meta["outputsSize"].(float64))
	if _, err := io.CopyN(io.Discard, br, outputsSize); err != nil {
		t.Fatal(err)
	}
	logBlob, err := io.ReadAll(br)
	if err != nil {
		t.Fatal(err)
	}

	var tarBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	var listing []map[string]any
	for _, e := range entries {
		hdr := &tar.Header{Name: e.path, Mode: 0o644, Format: tar.FormatGNU}
		file := map[string]any{"path": e.path, "mode": 0o644}
		if e.link != "" {
			hdr.Typeflag, hdr.Linkname, hdr.Mode = tar.TypeSymlink, e.link, 0o777
			file["link"], file["mode"] = e.link, 0o777
		} else {
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(e.content))
			sum := sha256.Sum256([]byte(e.listed))
			file["hash"], file["size"] = hex.EncodeToString(sum[:]), len(e.listed)
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.content)); err != nil {
			t.Fatal(err)
		}
		listing = append(listing, file)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	blob := enc.EncodeAll(tarBuf.Bytes(), nil)
	enc.Close()
	sum := sha256.Sum256(blob)
	meta["outputs"], meta["outputsBlob"], meta["outputsSize"] = listing, hex.EncodeToString(sum[:]), len(blob)
	newMeta, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	out.WriteString(magic)
	out.Write(newMeta)
	out.WriteByte('\n')
	out.Write(blob)
	out.Write(logBlob)
	return out.Bytes()
}

func readText(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// A remote entry whose listing plants dist/out.txt -> ../../../vx.workspace.ts is a miss with a
// warning naming both; the task's own write then lands in its output, not in the config.
func trustPlantedSymlink(t *testing.T, bin string) {
	ws := trustWorkspace(t, "mkdir -p dist && echo built > dist/out.txt", "")
	config := readText(t, filepath.Join(ws, "vx.workspace.ts"))
	srv := newArtifactServer(t)
	key, honest := honestRun(t, bin, ws, srv)
	srv.mu.Lock()
	srv.bodies[key] = craft(t, honest, []archiveEntry{{path: "dist/out.txt", link: "../../../vx.workspace.ts"}})
	srv.mu.Unlock()

	res := runVX(t, bin, ws, remoteEnv(srv.srv.URL), "run", "build", "--format", "json", "--remote-cache=read")
	if got := taskStatuses(t, res)["app#build"]; got != "miss" || res.err != nil {
		t.Fatalf("the planted entry: status %q, %v\n%s", got, res.err, res.stderr)
	}
	if !strings.Contains(res.stderr, "dist/out.txt") || !strings.Contains(res.stderr, "../../../vx.workspace.ts") {
		t.Errorf("no warning naming the link and its target:\n%s", res.stderr)
	}
	if got := readText(t, filepath.Join(ws, "vx.workspace.ts")); got != config {
		t.Fatalf("the workspace config was written through a planted link:\n%s", got)
	}
	if fi, err := os.Lstat(filepath.Join(ws, "packages/app/dist/out.txt")); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("dist/out.txt is not the task's own file: %v %v", fi, err)
	}
}

// An entry holding a link and then a file whose hash does not match is rejected, and the link it
// wrote is gone before the task runs: the task's write stays in its output and src/a.txt is as it
// was. The task refuses to run over a symlink, so that a link left behind fails the run.
func trustRejectedEntry(t *testing.T, bin string) {
	for name, link := range map[string]string{"link outside the outputs": "../src/a.txt", "link inside the outputs": "other.txt"} {
		t.Run(name, func(t *testing.T) {
			ws := trustWorkspace(t, "test ! -L dist/out.txt && mkdir -p dist && echo built > dist/out.txt", "")
			srv := newArtifactServer(t)
			key, honest := honestRun(t, bin, ws, srv)
			srv.mu.Lock()
			srv.bodies[key] = craft(t, honest, []archiveEntry{
				{path: "dist/out.txt", link: link},
				{path: "dist/z.txt", content: "tampered", listed: "original"},
			})
			srv.mu.Unlock()
			res := runVX(t, bin, ws, remoteEnv(srv.srv.URL), "run", "build", "--format", "json", "--remote-cache=read")
			if got := taskStatuses(t, res)["app#build"]; got != "miss" || res.err != nil {
				t.Fatalf("after the rejected entry: status %q, %v\n%s", got, res.err, res.stderr)
			}
			if got := readText(t, filepath.Join(ws, "packages/app/src/a.txt")); got != "source\n" {
				t.Fatalf("src/a.txt was written through the rejected entry's link: %q", got)
			}
			if _, err := os.Lstat(filepath.Join(ws, "packages/app/dist/z.txt")); !os.IsNotExist(err) {
				t.Errorf("the rejected entry's file is left: %v", err)
			}
		})
	}
}

// A server that sends an artifact of known size one byte every 300 ms is given up on at
// 2 × timeout + size ÷ 1 MiB/s: the run ends as a miss long before the whole body could have come.
func trustTrickle(t *testing.T, bin string) {
	ws := trustWorkspace(t, "mkdir -p dist && echo built > dist/out.txt", "")
	srv := newArtifactServer(t)
	_, honest := honestRun(t, bin, ws, srv)
	var sent int
	var sentMu sync.Mutex
	srv.mu.Lock()
	srv.serve = func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Content-Length", fmt.Sprint(len(honest)))
		w.WriteHeader(http.StatusOK)
		for i := range honest {
			if _, err := w.Write(honest[i : i+1]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			sentMu.Lock()
			sent++
			sentMu.Unlock()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(300 * time.Millisecond):
			}
		}
	}
	srv.mu.Unlock()
	res := runVX(t, bin, ws, remoteEnv(srv.srv.URL), "run", "build", "--format", "json", "--remote-cache=read")
	if got := taskStatuses(t, res)["app#build"]; got != "miss" || res.err != nil {
		t.Fatalf("against a trickling server: status %q, %v\n%s", got, res.err, res.stderr)
	}
	sentMu.Lock()
	defer sentMu.Unlock()
	if sent >= len(honest) {
		t.Fatalf("vx read all %d bytes of a trickled artifact: no deadline bounds the transfer", len(honest))
	}
	if !strings.Contains(res.stderr, "remote cache") {
		t.Errorf("no warning about the remote cache:\n%s", res.stderr)
	}
	t.Logf("gave up after %d of %d bytes; the run took %v", sent, len(honest), res.took.Round(time.Millisecond))
}

// A redirect to another port of the same host is followed without the token.
func trustRedirect(t *testing.T, bin string) {
	ws := trustWorkspace(t, "mkdir -p dist && echo built > dist/out.txt", "")
	other := newArtifactServer(t)
	srv := newArtifactServer(t)
	srv.mu.Lock()
	srv.serve = func(w http.ResponseWriter, r *http.Request, _ []byte) {
		http.Redirect(w, r, other.srv.URL+r.URL.RequestURI(), http.StatusFound)
	}
	srv.mu.Unlock()
	res := runVX(t, bin, ws, remoteEnv(srv.srv.URL), "run", "build", "--format", "json", "--remote-cache=read")
	if res.err != nil {
		t.Fatalf("run: %v\n%s", res.err, res.stderr)
	}
	srv.mu.Lock()
	sawToken := strings.Contains(strings.Join(srv.auth, " "), trustToken)
	srv.mu.Unlock()
	if !sawToken {
		t.Fatalf("the cache server itself never got the token: the test proves nothing")
	}
	other.mu.Lock()
	defer other.mu.Unlock()
	if len(other.auth) == 0 {
		t.Fatal("the redirect was not followed")
	}
	for _, a := range other.auth {
		if a != "" {
			t.Fatalf("the other port got Authorization %q", a)
		}
	}
}

// A task sees none of vx's credentials nor the token-like variables of its environment, and no
// descriptor its caller left open.
func trustInherited(t *testing.T, bin string) {
	ws := trustWorkspace(t, "mkdir -p dist && env > dist/env.txt && (echo leak >&3) 2>/dev/null; (echo leak >&4) 2>/dev/null; true", "")
	leak3, err := os.Create(filepath.Join(t.TempDir(), "fd3"))
	if err != nil {
		t.Fatal(err)
	}
	defer leak3.Close()
	leak4, err := os.Create(filepath.Join(t.TempDir(), "fd4"))
	if err != nil {
		t.Fatal(err)
	}
	defer leak4.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "build", "--remote-cache=off")
	cmd.Dir = ws
	cmd.Env = append(crashEnv(), "VX_REMOTE_CACHE_TOKEN=vx-credential-1", "GITHUB_TOKEN=gh-credential-2",
		"NPM_TOKEN=npm-credential-3", "npm_config__authToken=npm-credential-4", "MY_SECRET=my-credential-5")
	cmd.ExtraFiles = []*os.File{leak3, leak4}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	env := readText(t, filepath.Join(ws, "packages/app/dist/env.txt"))
	for _, secret := range []string{"vx-credential-1", "gh-credential-2", "npm-credential-3", "npm-credential-4", "my-credential-5"} {
		if strings.Contains(env, secret) {
			t.Errorf("the task saw %s:\n%s", secret, env)
		}
	}
	for _, f := range []*os.File{leak3, leak4} {
		if fi, err := f.Stat(); err != nil || fi.Size() != 0 {
			t.Errorf("the task wrote to the inherited %s: %v %v", f.Name(), fi.Size(), err)
		}
	}
}

// With sandbox read ['src/**'] and PATH=/usr/bin:/bin, a task cannot read a file in $HOME nor one
// outside the workspace, nor list /tmp.
func trustSandboxRead(t *testing.T, bin string) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".bashrc"), "bashrc-secret\n")
	outside := filepath.Join(t.TempDir(), "private.key")
	writeFile(t, outside, "key-secret\n")
	probe := fmt.Sprintf("! cat %s/.bashrc && ! cat %s && ! ls /tmp && mkdir -p probe && echo ok > probe/out.txt", home, outside)
	// Its outputs apart from build's: two tasks with no edge between them never share outputs.
	ws := trustWorkspace(t, "true", fmt.Sprintf("probe: { command: %s, outputs: ['probe/**'], sandbox: { read: ['src/**'], required: true } },", jsString(probe)))
	info := runVX(t, bin, ws, nil, "info", "--format", "json")
	var doc struct {
		Sandbox struct {
			Value struct {
				Enforced bool `json:"enforced"`
			} `json:"value"`
		} `json:"sandboxReport"`
	}
	if err := json.Unmarshal([]byte(info.stdout), &doc); err != nil {
		t.Fatalf("vx info: %v\n%s", err, info.stdout)
	}
	if !doc.Sandbox.Value.Enforced {
		t.Skip("this kernel enforces no filesystem sandbox (Landlock): nothing to try")
	}
	res := runVX(t, bin, ws, []string{"PATH=/usr/bin:/bin", "HOME=" + home}, "run", "probe", "--format", "json", "--remote-cache=off")
	if got := taskStatuses(t, res)["app#probe"]; got != "miss" || res.err != nil {
		t.Fatalf("the sandboxed task read outside its read set (status %q, %v):\n%s", got, res.err, res.stderr)
	}
}

// Two runs of one workspace at once run its task once: the task fails when it finds itself
// already running, so both pass only if the second waited for the first.
func trustTwoRuns(t *testing.T, bin string) {
	ws := trustWorkspace(t, "mkdir ../../.running || exit 1; sleep 1; rmdir ../../.running; mkdir -p dist && echo built > dist/out.txt", "")
	var wg sync.WaitGroup
	results := make([]vxResult, 2)
	for i := range results {
		wg.Go(func() {
			results[i] = runVX(t, bin, ws, nil, "run", "build", "--format", "json", "--remote-cache=off")
		})
	}
	wg.Wait()
	statuses := []string{}
	for _, res := range results {
		if res.err != nil {
			t.Fatalf("a run of two at once failed: %v\n%s\n%s", res.err, res.stdout, res.stderr)
		}
		statuses = append(statuses, taskStatuses(t, res)["app#build"])
	}
	if !strings.Contains(strings.Join(statuses, " "), "hit") {
		t.Errorf("statuses %v: the second run did not hit what the first stored", statuses)
	}
}

// Control characters in config text reach a terminal escaped; JSON keeps them as they are.
func trustShowEscapes(t *testing.T, bin string) {
	ws := trustWorkspace(t, "echo \x1b[2J\x1b]52;c;Zm9v\x07 done", "")
	res := runVX(t, bin, ws, nil, "show", "app#build")
	if res.err != nil {
		t.Fatalf("vx show: %v\n%s", res.err, res.stderr)
	}
	if strings.ContainsAny(res.stdout, "\x1b\x07") {
		t.Fatalf("vx show printed raw control characters: %q", res.stdout)
	}
	res = runVX(t, bin, ws, nil, "show", "app#build", "--format", "json")
	if res.err != nil || !strings.Contains(res.stdout, `\u001b[2J`) {
		t.Fatalf("vx show --format json does not keep the command as it is: %v %q", res.err, res.stdout)
	}
}

// A config that doubles a string until something stops it ends with an error naming the bound,
// within the documented memory.
func trustGrowingConfig(t *testing.T, bin string) {
	for name, grow := range map[string]string{"concat": "s = s.concat(s)", "plus": "s = s + s"} {
		t.Run(name, func(t *testing.T) {
			ws := t.TempDir()
			writeFile(t, filepath.Join(ws, "vx.workspace.ts"), "let s = 'ab'\nwhile (true) "+grow+"\nexport default { projects: [] }\n")
			res := runVX(t, bin, ws, nil, "show")
			if res.err == nil {
				t.Fatal("a config that never ends loaded")
			}
			if res.maxRSSBytes >= 1500<<20 {
				t.Errorf("peak RSS %d MiB, over 1.5 GB", res.maxRSSBytes>>20)
			}
			if !strings.Contains(res.stderr, "GiB") && !strings.Contains(res.stderr, "memory") && !strings.Contains(res.stderr, "longer than") {
				t.Errorf("the error does not name the bound it hit:\n%s", res.stderr)
			}
			t.Logf("stopped after %v at %d MiB: %s", res.took.Round(time.Millisecond), res.maxRSSBytes>>20, strings.TrimSpace(res.stderr))
		})
	}
}
