//go:build linux

package stress

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/runner"
	"github.com/vzn/vx/engine/taskenv"
	"github.com/vzn/vx/proc"
	"github.com/vzn/vx/proc/sandbox"
)

// buildHelperFor builds the sandbox helper, vx-sandbox, into a temporary folder, without cgo.
func buildHelperFor(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), sandbox.HelperName)
	cmd := exec.Command("go", "build", "-o", bin, "github.com/vzn/vx/cmd/vx-sandbox")
	// As a release builds it: go-landlock's psx would otherwise link cgo, never used.
	cmd.Dir, cmd.Env = "..", append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// BenchmarkSandboxedTask measures what a sandbox adds to a task: each iteration runs, through the
// runner (one task a run, uncached), a no-op task (`true`) without a sandbox and the same task
// with `sandbox: true` (Landlock, a network namespace, a fresh TMPDIR, the project listed before
// and after), both supervised by vx-sandbox, and the unsandboxed task supervised by vx itself
// (`vx __supervise`, what a vx without the helper next to it pays). It reports the median of
// each and of the sandbox's extra cost per iteration:
//
//	go test -run '^$' -bench SandboxedTask -benchtime 200x -count 3 ./stress/
func BenchmarkSandboxedTask(b *testing.B) {
	v := sandbox.Probe()
	if !v.Enforced.Filesystem {
		b.Skip("this host has no Landlock")
	}
	helper := &proc.Supervisor{Path: buildHelperFor(b)}
	vx := &proc.Supervisor{Path: buildVXFor(b), Name: "vx"}
	root := b.TempDir()
	ws := &graph.Workspace{Root: root, CacheDir: filepath.Join(root, ".vx")}
	p := &graph.Project{Name: "p", Dir: "p", AbsDir: filepath.Join(root, "p"), Tasks: map[string]*graph.Task{}}
	for _, f := range []string{"src/a.ts", "src/b.ts", "src/c.ts", "package.json"} {
		path := filepath.Join(p.AbsDir, f)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("x\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	p.Tasks["plain"] = &graph.Task{ID: "p#plain", Project: "p", Name: "plain", Command: "true", Inputs: []string{}, DependsOn: []string{}}
	p.Tasks["boxed"] = &graph.Task{ID: "p#boxed", Project: "p", Name: "boxed", Command: "true", Inputs: []string{}, DependsOn: []string{},
		Outputs: []string{"dist/**"}, Sandbox: &graph.Sandbox{}}
	ws.Projects = []*graph.Project{p}
	ws.Index()
	env := []string{"PATH=" + os.Getenv("PATH")}
	ctx := context.Background()
	runOnce := func(id string, sup *proc.Supervisor) time.Duration {
		exec := func(ctx context.Context, spec proc.Spec) (proc.Result, error) {
			if spec.Supervisor == nil {
				spec.Supervisor = sup
			}
			return proc.Run(ctx, spec)
		}
		start := time.Now()
		s, err := runner.Run(ctx, runner.Options{Workspace: ws, TaskIDs: []string{id}, Requested: []string{id}, Force: true,
			Concurrency: 1, Output: io.Discard, Environ: env, Exec: exec,
			Sandbox: taskenv.SandboxOptions{Supervisor: sup, Verdict: func() sandbox.Verdict { return v }}})
		if err != nil || !s.OK {
			b.Fatalf("run %s: %v %+v", id, err, s)
		}
		return time.Since(start)
	}
	runOnce("p#plain", helper) // binaries into the page cache, the index made
	runOnce("p#boxed", helper)
	runOnce("p#plain", vx)
	var plain, boxed, extra, viaVX []time.Duration
	for b.Loop() {
		pl, bx, vv := runOnce("p#plain", helper), runOnce("p#boxed", helper), runOnce("p#plain", vx)
		plain, boxed, extra, viaVX = append(plain, pl), append(boxed, bx), append(extra, bx-pl), append(viaVX, vv)
	}
	b.ReportMetric(ms(median(plain)), "plain-ms")
	b.ReportMetric(ms(median(boxed)), "sandboxed-ms")
	b.ReportMetric(ms(median(extra)), "sandbox-extra-ms")
	b.ReportMetric(ms(median(viaVX)), "plain-vx-supervise-ms")
	b.ReportMetric(ms(median(viaVX))-ms(median(plain)), "helper-saves-ms")
}

// TestSandboxHelper runs a task under the real vx-sandbox helper, as vx does when it lies next to
// it: an allowed write passes, one outside is denied, and without network the task has a network
// namespace of its own.
func TestSandboxHelper(t *testing.T) {
	v := sandbox.Probe()
	if !v.Enforced.Filesystem {
		t.Skip("this host has no Landlock")
	}
	allowed, other := t.TempDir(), t.TempDir()
	p := sandbox.Policy{Write: []string{allowed}}
	sup := &proc.Supervisor{Path: buildHelperFor(t), Args: sandbox.Args(p), Attr: sandbox.Attr(p, v)}
	var out strings.Builder
	res, err := proc.Run(context.Background(), proc.Spec{Env: []string{"PATH=" + os.Getenv("PATH")}, Stdout: &out, Stderr: &out,
		Shell:      `echo a > "` + allowed + `/a" && if echo b > "` + other + `/b"; then exit 3; fi && cat /proc/self/net/dev`,
		Supervisor: sup})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exit %d, %v:\n%s", res.ExitCode, err, out.String())
	}
	if !strings.Contains(out.String(), "Permission denied") {
		t.Errorf("no denial:\n%s", out.String())
	}
	if lines := strings.Count(strings.TrimSpace(out.String()), "\n"); v.Enforced.Network && lines != 3 {
		t.Errorf("want only a loopback in /proc/self/net/dev:\n%s", out.String())
	}
}
