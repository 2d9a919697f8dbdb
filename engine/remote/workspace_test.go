package remote_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
)

// secretValue is a secret a task prints: it must never reach a server.
const secretValue = "hunter2-never-uploaded"

// checkout writes a workspace of three projects (lib ← mid ← app) in a new folder, as a git
// checkout: build writes dist/ from src/ and the dependency's dist, test checks it. remote is the
// remoteCache object's TypeScript text ("" for none); extraBuild runs first in lib's build.
func checkout(t testing.TB, remote, extraBuild string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"vx.workspace.ts": fmt.Sprintf(`import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({
  projects: ['packages/*'],
  %s
  tasks: {
    build: { command: 'sh ../../build.sh', dependsOn: ['^build'], inputs: ['src/**'], outputs: ['dist/**'],
             exec: { env: { SECRET: { secret: 'TASK_SECRET' } } } },
    test: { command: 'test -s dist/out.txt && echo tested', dependsOn: ['build'], inputs: ['src/**'] },
  },
})
`, remote),
		"build.sh": extraBuild + `set -e
mkdir -p dist/sub
{ cat src/*; for d in ../*/dist/out.txt; do [ -f "$d" ] && cat "$d"; done; } > ../out.$$.tmp
mv ../out.$$.tmp dist/out.txt
head -c 20000 /dev/urandom | od -An -tx1 > /dev/null
printf 'binary\000\001\002' > dist/sub/data.bin
echo "built $(basename "$PWD") with $SECRET"
`,
		"packages/lib/package.json": `{"name":"lib"}`,
		"packages/lib/src/a.txt":    "lib source\n",
		"packages/mid/package.json": `{"name":"mid","dependencies":{"lib":"*"}}`,
		"packages/mid/src/a.txt":    "mid source\n",
		"packages/app/package.json": `{"name":"app","dependencies":{"mid":"*"}}`,
		"packages/app/src/a.txt":    "app source\n",
		".gitignore":                ".vx/\ndist/\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// runResult is one vx run: its summary and its stderr.
type runResult struct {
	sum    summary.Summary
	stderr string
	code   int
}

// vxRun runs `vx run ARGS --format json` in dir with env (no inherited VX_ variable).
func vxRun(t testing.TB, dir string, env []string, args ...string) runResult {
	t.Helper()
	cmd := exec.Command(vxBinary(t), append(append([]string{"run"}, args...), "--format", "json")...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "VX_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "TASK_SECRET="+secretValue, "VX_CONCURRENCY=2")
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := runResult{stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(stdout.Bytes(), &r.sum); err != nil {
		t.Fatalf("vx run %v: %v\nstdout: %s\nstderr: %s", args, err, stdout.String(), r.stderr)
	}
	return r
}

// sources counts the run's tasks by where they came from: "local", "remote", "run" (a miss).
func sources(r runResult) map[string]int {
	out := map[string]int{}
	for _, task := range r.sum.Tasks {
		switch {
		case task.Status == store.StatusMiss:
			out["run"]++
		case task.CacheSource != nil:
			out[*task.CacheSource]++
		default:
			out[string(task.Status)]++
		}
	}
	return out
}

// warnings are the remote cache's lines on stderr.
func warnings(r runResult) []string {
	var out []string
	for _, line := range strings.Split(r.stderr, "\n") {
		if strings.HasPrefix(line, "vx: remote cache") {
			out = append(out, line)
		}
	}
	return out
}

// outputsOf answers every file under the checkout's dist folders, by path.
func outputsOf(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(filepath.Join(dir, "packages"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(p, string(filepath.Separator)+"dist"+string(filepath.Separator)) {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mustPass fails the test unless the run passed.
func mustPass(t testing.TB, what string, r runResult) {
	t.Helper()
	if !r.sum.OK || r.code != 0 {
		t.Fatalf("%s: run failed (exit %d)\nstderr:\n%s", what, r.code, r.stderr)
	}
}

// sameOutputs fails the test unless both checkouts hold the same output files, byte for byte.
func sameOutputs(t testing.TB, a, b string) {
	t.Helper()
	oa, ob := outputsOf(t, a), outputsOf(t, b)
	if len(oa) == 0 {
		t.Fatal("checkout A has no outputs")
	}
	if fmt.Sprint(oa) != fmt.Sprint(ob) {
		t.Fatalf("outputs differ:\nA: %q\nB: %q", oa, ob)
	}
}

// noSecretIn fails the test if any file under dir holds the task's secret.
func noSecretIn(t testing.TB, dir string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if data, err := os.ReadFile(p); err == nil && bytes.Contains(data, []byte(secretValue)) {
			t.Errorf("the server stored the secret in %s", p)
		}
		return nil
	})
}

// vxJSON runs `vx ARGS --format json` in dir and decodes its answer into v.
func vxJSON(t testing.TB, dir string, env []string, v any, args ...string) {
	t.Helper()
	cmd := exec.Command(vxBinary(t), append(args, "--format", "json")...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "VX_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("vx %v: %v", args, err)
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("vx %v: %v\n%s", args, err, out)
	}
}

// TestExcludeDependenciesRestoresFromRemote runs only the task named in a checkout whose local
// cache is empty: what it depends on comes from the remote cache, which the plan cannot see; a
// dependency the remote cache lacks fails, blocking the task named, and nothing runs.
func TestExcludeDependenciesRestoresFromRemote(t *testing.T) {
	srv := startBazelRemote(t, "", "")
	env := []string{"VX_REMOTE_CACHE_URL=" + srv.URL}
	mustPass(t, "A", vxRun(t, checkout(t, "", ""), env, "build"))

	b := checkout(t, "", "")
	rb := vxRun(t, b, env, "app#build", "--exclude-dependencies")
	mustPass(t, "B", rb)
	if got := sources(rb); got["remote"] != 3 {
		t.Fatalf("B: want lib, mid (and app) from the remote cache, got %v\n%s", got, rb.stderr)
	}

	c := checkout(t, "", "")
	if err := os.WriteFile(filepath.Join(c, "packages/lib/src/a.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rc := vxRun(t, c, env, "app#build", "--exclude-dependencies")
	if rc.code == 0 || sources(rc)["run"] != 0 {
		t.Fatalf("C: want a failed run in which nothing ran, got exit %d %v\n%s", rc.code, sources(rc), rc.stderr)
	}
	if !strings.Contains(rc.stderr, "lib#build has no cache entry") {
		t.Fatalf("C: the run does not name lib#build's miss:\n%s", rc.stderr)
	}
}
