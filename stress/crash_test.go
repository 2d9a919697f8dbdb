package stress

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/internal/testkit"
)

// buildVX answers the vx binary, built once for every test of the run (testkit.Binary).
func buildVX(t *testing.T) string {
	t.Helper()
	return testkit.Binary(t, "cmd/vx")
}

// waitNoProcessIn waits until no process has its working folder inside dir (Linux's /proc;
// elsewhere it cannot tell and waits a bounded half second).
func waitNoProcessIn(t *testing.T, dir string, timeout time.Duration) {
	t.Helper()
	if _, err := os.Stat("/proc/self/cwd"); err != nil {
		time.Sleep(500 * time.Millisecond)
		return
	}
	deadline := time.Now().Add(timeout)
	for {
		var left []string
		pids, _ := filepath.Glob("/proc/[0-9]*")
		for _, p := range pids {
			if cwd, err := os.Readlink(p + "/cwd"); err == nil && (cwd == dir || strings.HasPrefix(cwd, dir+string(filepath.Separator))) {
				left = append(left, filepath.Base(p))
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes still running in %s after %v: %v", dir, timeout, left)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// crashEnv is the environment of the vx processes: no inherited VX_ variable.
func crashEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "VX_") {
			env = append(env, kv)
		}
	}
	return append(env, "GIT_AUTHOR_NAME=vx", "GIT_AUTHOR_EMAIL=vx@example.com", "GIT_COMMITTER_NAME=vx",
		"GIT_COMMITTER_EMAIL=vx@example.com")
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCrashKill9 kills `vx run` with SIGKILL at random points of 50 runs (8 under -short) that
// miss, store outputs and record history; then the index must pass PRAGMA integrity_check and
// the next run must succeed, every interrupted run reading as such.
func TestCrashKill9(t *testing.T) {
	runs := 50
	if testing.Short() {
		runs = 8
	}
	bin := buildVX(t)
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "vx.workspace.ts"), `import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({
  projects: ['packages/*'],
  tasks: {
    build: { command: 'sleep 0.0$(($$ % 7)); mkdir -p dist; cat src.txt > dist/out.txt; echo built', dependsOn: ['^build'], outputs: ['dist/**'] },
    test: { command: 'sleep 0.0$(($$ % 5)); cat dist/out.txt', dependsOn: ['build'] },
  },
})
`)
	writeFile(t, filepath.Join(ws, ".gitignore"), ".vx/\ndist/\n")
	const projects = 12
	for i := 0; i < projects; i++ {
		deps := ""
		if i > 0 {
			deps = fmt.Sprintf(`, "dependencies": { "p%d": "*" }`, (i-1)/2)
		}
		writeFile(t, filepath.Join(ws, "packages", fmt.Sprintf("p%d", i), "package.json"), fmt.Sprintf(`{ "name": "p%d"%s }`, i, deps))
		writeFile(t, filepath.Join(ws, "packages", fmt.Sprintf("p%d", i), "src.txt"), "0")
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = ws, crashEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed>>7))
	for i := 0; i < runs; i++ {
		// A changed input in a random project: it and its dependents miss and write.
		writeFile(t, filepath.Join(ws, "packages", fmt.Sprintf("p%d", rng.IntN(projects)), "src.txt"), fmt.Sprint(i))
		cmd := exec.Command(bin, "run", "--all", "--concurrency", "4")
		cmd.Dir, cmd.Env = ws, crashEnv()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Not a synchronisation: the kill lands at a random moment of the run, which is the test.
		time.Sleep(time.Duration(rng.IntN(600)) * time.Millisecond)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	// Tasks the killed runs left behind end within a fraction of a second (their supervisor
	// outlives vx only to stop them); the check below must not race their last writes.
	waitNoProcessIn(t, ws, 30*time.Second)

	ctx := context.Background()
	st, err := store.OpenReadOnly(ctx, filepath.Join(ws, ".vx"))
	if err != nil {
		t.Fatalf("open the index after the crashes: %v", err)
	}
	res, err := st.IntegrityCheck(ctx)
	st.Close()
	if err != nil || res != "ok" {
		t.Fatalf("integrity_check: %q %v", res, err)
	}

	cmd := exec.Command(bin, "run", "--all", "--format", "json")
	cmd.Dir, cmd.Env = ws, crashEnv()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the run after the crashes: %v\n%s\n%s", err, out, stderr.String())
	}
	var sum struct {
		OK    bool `json:"ok"`
		Tasks []struct {
			Status string `json:"status"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(out, &sum); err != nil || !sum.OK || len(sum.Tasks) != 2*projects {
		t.Fatalf("the run after the crashes: %v %s", err, out)
	}

	list := exec.Command(bin, "last", "--list", "--limit", "500", "--format", "json")
	list.Dir, list.Env = ws, crashEnv()
	out, err = list.Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), `"status": "running"`) {
		t.Fatalf("a killed run still reads as running:\n%s", out)
	}
}
