package stress

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/executor/remoteexec/buildbarntest"
)

// The remote execution benchmarks run vx against a real Buildbarn (the test harness's: storage,
// scheduler and one worker on this machine, loopback), built as VX_TEST_BUILDBARN says; without
// it they are skipped. Figures in docs/performance.md.

// remoteBenchVX builds vx into a scratch folder and answers a command maker for the workspace
// ws.
func remoteBenchVX(b *testing.B) func(ws string, args ...string) *exec.Cmd {
	b.Helper()
	exe := filepath.Join(b.TempDir(), "vx")
	root, err := filepath.Abs("..")
	if err != nil {
		b.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", exe, "./cmd/vx")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building vx: %v\n%s", err, out)
	}
	env := crashEnv()
	return func(ws string, args ...string) *exec.Cmd {
		cmd := exec.Command(exe, args...)
		cmd.Dir, cmd.Env = ws, env
		return cmd
	}
}

// writeBenchTree writes files (slash paths relative to dir), aged so that the stat cache trusts
// them.
func writeBenchTree(b *testing.B, dir string, files map[string]string) {
	b.Helper()
	old := time.Now().Add(-time.Hour)
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			b.Fatal(err)
		}
	}
}

// benchSummary is what the benchmarks read of `vx run --format json`.
type benchSummary struct {
	OK    bool `json:"ok"`
	Tasks []struct {
		TaskID     string `json:"taskId"`
		Status     string `json:"status"`
		Executor   string `json:"executor"`
		DurationMs int64  `json:"durationMs"`
	} `json:"tasks"`
}

// count counts the tasks of s for which is holds.
func (s benchSummary) count(is func(status, executor string) bool) int {
	n := 0
	for _, t := range s.Tasks {
		if is(t.Status, t.Executor) {
			n++
		}
	}
	return n
}

func isHit(status, _ string) bool { return status == "hit" }

// runJSON runs cmd (a vx run --format json) and answers its summary.
func runJSON(b *testing.B, cmd *exec.Cmd) benchSummary {
	b.Helper()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var s benchSummary
	if jerr := json.Unmarshal(out, &s); jerr != nil || err != nil || !s.OK {
		b.Fatalf("%v: %v / %v\n%s\n%s", cmd.Args, err, jerr, out, stderr.String())
	}
	return s
}

// medianMs is the median of ds in milliseconds.
func medianMs(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[len(s)/2].Microseconds()) / 1000
}

// awaitWorker runs the one-task workspace ws remotely until its task runs on the engine (a
// worker has registered with the scheduler), for at most a minute.
func awaitWorker(b *testing.B, vx func(string, ...string) *exec.Cmd, ws string, bb *buildbarntest.Engine) {
	b.Helper()
	deadline := time.Now().Add(time.Minute)
	for i := 0; ; i++ {
		writeBenchTree(b, ws, map[string]string{"packages/p/src/n.txt": fmt.Sprintf("warm %d %d\n", i, time.Now().UnixNano())})
		s := runJSON(b, vx(ws, "run", "build", "--remote-exec", "--format", "json"))
		if s.Tasks[0].Executor == "remote" {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("no Buildbarn worker registered:\n%s", bb.Logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// BenchmarkRemoteActionOverhead measures one trivial task (`echo x > dist/o`) run locally and on
// Buildbarn, side by side: each iteration runs it once each way, in turn (so that both see the
// same load), under a key never seen (an input written anew), so that neither vx's cache nor the
// engine's Action Cache holds it:
//
//	VX_TEST_BUILDBARN=/work/bb/bin go test -run '^$' -bench RemoteActionOverhead -benchtime 40x ./stress/
//
// local-ms and remote-ms are the median wall times of the whole `vx run` process, overhead-ms the
// median of each iteration's difference; local-task-ms and remote-task-ms the medians of the
// task's own duration as its row says it (for a remote task: from the Execute call to its
// result). ns/op is the pair's.
// remoteBenchConfig is the benchmarks' vx.workspace.ts: one task, build, that writes dist/o from
// src/, sent to the engine at addr.
func remoteBenchConfig(addr string) string {
	return "import { defineWorkspace } from '@vzn/vx/config'\n" +
		"export default defineWorkspace({ projects: ['packages/*'], cacheDir: '.vx/shared',\n" +
		"  remote: { executor: 'grpc://" + addr + "', platform: { OSFamily: 'linux' } },\n" +
		"  tasks: { build: { command: 'mkdir -p dist && echo x > dist/o', inputs: ['src/**'], outputs: ['dist/**'] } } })\n"
}

func BenchmarkRemoteActionOverhead(b *testing.B) {
	bb := buildbarntest.Start(b)
	vx := remoteBenchVX(b)
	ws := b.TempDir()
	writeBenchTree(b, ws, map[string]string{
		"vx.workspace.ts":         remoteBenchConfig(bb.Addr),
		"packages/p/package.json": `{"name": "p"}`,
		"packages/p/src/n.txt":    "0\n",
	})
	awaitWorker(b, vx, ws, bb)
	walls := map[string][]time.Duration{}
	tasks := map[string][]time.Duration{}
	var overhead []time.Duration
	i := 0
	for b.Loop() {
		for _, mode := range []string{"local", "remote"} {
			i++
			writeBenchTree(b, ws, map[string]string{"packages/p/src/n.txt": fmt.Sprintf("%d %d\n", i, time.Now().UnixNano())})
			flag := map[string]string{"local": "--no-remote-exec", "remote": "--remote-exec"}[mode]
			start := time.Now()
			s := runJSON(b, vx(ws, "run", "build", flag, "--format", "json"))
			walls[mode] = append(walls[mode], time.Since(start))
			if s.Tasks[0].Status != "miss" || (s.Tasks[0].Executor == "remote") != (mode == "remote") {
				b.Fatalf("iteration %d: %+v, want a miss run %s", i, s.Tasks[0], mode)
			}
			tasks[mode] = append(tasks[mode], time.Duration(s.Tasks[0].DurationMs)*time.Millisecond)
		}
		n := len(walls["local"]) - 1
		overhead = append(overhead, walls["remote"][n]-walls["local"][n])
	}
	for _, mode := range []string{"local", "remote"} {
		b.ReportMetric(medianMs(walls[mode]), mode+"-ms")
		b.ReportMetric(medianMs(tasks[mode]), mode+"-task-ms")
	}
	b.ReportMetric(medianMs(overhead), "overhead-ms")
}

// remoteBenchPackages is the size of BenchmarkRemoteAllHit's workspace.
const remoteBenchPackages = 300

// allHitWorkspace writes a workspace of remoteBenchPackages independent packages, each with a
// build of its own source, into dir; remote, when not empty, is its remoteCache and remote
// config.
func allHitWorkspace(b *testing.B, dir, remote string) {
	b.Helper()
	files := map[string]string{
		"vx.workspace.ts": "import { defineWorkspace } from '@vzn/vx/config'\n" +
			"export default defineWorkspace({ projects: ['packages/*'], cacheDir: '.vx/shared',\n" + remote +
			"  tasks: { build: { command: 'mkdir -p dist && cat src/a.txt > dist/o.txt', inputs: ['src/**'], outputs: ['dist/**'] } } })\n",
	}
	for i := range remoteBenchPackages {
		files[fmt.Sprintf("packages/p%03d/package.json", i)] = fmt.Sprintf(`{"name": "p%03d"}`, i)
		files[fmt.Sprintf("packages/p%03d/src/a.txt", i)] = fmt.Sprintf("package %d\n", i)
	}
	writeBenchTree(b, dir, files)
}

// BenchmarkRemoteAllHit measures a run of 300 packages whose every task hits, side by side:
// local-hit is a second `vx run build` in the checkout that built them (its own .vx, outputs in
// place); local-restore the same with every output removed first (restored from the local
// cache); remote-hit a run in a second checkout with an empty .vx and no outputs, whose every
// task hits in the REAPI cache the engine serves (the first checkout's remote run filled it) and
// restores its outputs from there, with remote.capacity's default; remote-hit-cap2 and
// remote-hit-cap32 the same with remote.capacity 2 (as many lookups at once as the local workers
// of a 2-core machine) and 32:
//
//	VX_TEST_BUILDBARN=/work/bb/bin go test -run '^$' -bench RemoteAllHit -benchtime 5x ./stress/
//
// ms/run is the median wall time of the `vx run` process.
func BenchmarkRemoteAllHit(b *testing.B) {
	bb := buildbarntest.Start(b)
	vx := remoteBenchVX(b)
	probe := b.TempDir()
	writeBenchTree(b, probe, map[string]string{
		"vx.workspace.ts":         remoteBenchConfig(bb.Addr),
		"packages/p/package.json": `{"name": "p"}`,
	})
	awaitWorker(b, vx, probe, bb)

	local := b.TempDir()
	allHitWorkspace(b, local, "")
	runJSON(b, vx(local, "run", "build", "--format", "json"))
	remoteCfg := func(capacity string) string {
		return "  remoteCache: { reapi: 'grpc://" + bb.Addr + "' },\n" +
			"  remote: { execute: true, platform: { OSFamily: 'linux' }" + capacity + " },\n"
	}
	first, second, cap2, cap32 := b.TempDir(), b.TempDir(), b.TempDir(), b.TempDir()
	allHitWorkspace(b, first, remoteCfg(""))
	allHitWorkspace(b, second, remoteCfg(""))
	allHitWorkspace(b, cap2, remoteCfg(", capacity: 2"))
	allHitWorkspace(b, cap32, remoteCfg(", capacity: 32"))
	if s := runJSON(b, vx(first, "run", "build", "--format", "json")); s.count(func(_, ex string) bool { return ex == "remote" }) != remoteBenchPackages {
		b.Fatalf("the first checkout's build did not run every task remotely: %+v", s.Tasks)
	}
	allHit := func(ws string, clear func(b *testing.B, ws string)) func(b *testing.B) {
		return func(b *testing.B) {
			var walls []time.Duration
			for b.Loop() {
				b.StopTimer()
				clear(b, ws)
				b.StartTimer()
				start := time.Now()
				s := runJSON(b, vx(ws, "run", "build", "--format", "json"))
				walls = append(walls, time.Since(start))
				if n := s.count(isHit); n != remoteBenchPackages {
					b.Fatalf("%d hits, want %d: %+v", n, remoteBenchPackages, s.Tasks[:3])
				}
			}
			b.ReportMetric(medianMs(walls), "ms/run")
		}
	}
	b.Run("local-hit", allHit(local, func(*testing.B, string) {}))
	b.Run("local-restore", allHit(local, removeOutputs))
	fresh := func(b *testing.B, ws string) {
		if err := os.RemoveAll(filepath.Join(ws, ".vx")); err != nil {
			b.Fatal(err)
		}
		removeOutputs(b, ws)
	}
	b.Run("remote-hit", allHit(second, fresh))
	b.Run("remote-hit-cap2", allHit(cap2, fresh))
	b.Run("remote-hit-cap32", allHit(cap32, fresh))
}

// removeOutputs removes the outputs of allHitWorkspace's builds in ws.
func removeOutputs(b *testing.B, ws string) {
	for i := range remoteBenchPackages {
		if err := os.RemoveAll(filepath.Join(ws, fmt.Sprintf("packages/p%03d/dist", i))); err != nil {
			b.Fatal(err)
		}
	}
}
