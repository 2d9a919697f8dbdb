//go:build unix

package stress

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vzn/vx/internal/testkit"
	"github.com/vzn/vx/proc"
)

// buildVXFor answers the vx binary, built once for every test and benchmark of the run
// (testkit.Binary).
func buildVXFor(tb testing.TB) string {
	tb.Helper()
	return testkit.Binary(tb, "cmd/vx")
}

// BenchmarkTaskSupervisor measures what a task's supervisor (`vx __supervise`, a re-exec of vx)
// adds to a task: each iteration runs a no-op task (`/bin/sh -c true`) through proc.Run directly
// and then under the supervisor, in turn, so that both see the same machine; it reports the median
// of each and of their difference per iteration:
//
//	go test -run '^$' -bench TaskSupervisor -benchtime 400x ./stress/
func BenchmarkTaskSupervisor(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("supervisors are Linux only")
	}
	exe := buildVXFor(b)
	sup := &proc.Supervisor{Path: exe, Name: "vx"}
	env := []string{"PATH=" + os.Getenv("PATH")}
	ctx := context.Background()
	runOnce := func(s *proc.Supervisor) time.Duration {
		start := time.Now()
		res, err := proc.Run(ctx, proc.Spec{Shell: "true", Env: env, Supervisor: s})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("no-op task (supervisor %v): %+v, %v", s != nil, res, err)
		}
		return time.Since(start)
	}
	runOnce(sup) // the binary into the page cache
	var direct, supervised, overhead []time.Duration
	for b.Loop() {
		d, s := runOnce(nil), runOnce(sup)
		direct, supervised, overhead = append(direct, d), append(supervised, s), append(overhead, s-d)
	}
	b.ReportMetric(ms(median(direct)), "direct-ms")
	b.ReportMetric(ms(median(supervised)), "supervised-ms")
	b.ReportMetric(ms(median(overhead)), "overhead-ms")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// TestTaskTreesStress runs many tasks side by side, each leaving processes behind in every way a
// task can (in its group, double-forked into a session of its own with an empty environment,
// nohup, a chain of orphans, a process that ignores SIGTERM); some fail, some are cancelled by a
// SIGTERM to vx, some by two. After each `vx run` has exited, not one of those processes may be
// alive, and every run must read as finished in the history.
func TestTaskTreesStress(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("supervisors are Linux only")
	}
	runs := 12
	if testing.Short() {
		runs = 4
	}
	bin := buildVXFor(t)
	ws := t.TempDir()
	pidsDir := filepath.Join(ws, "pids")
	const projects = 8
	// Every process a task starts writes its pid to a file in $PIDS/<task's pid> (the environment
	// of some is cleared: they are given the folder as an argument); the task waits for all four.
	leave := `d="$PIDS/$$"; mkdir -p "$d"; ` +
		`sleep 300 & echo $! > "$d/bg"; ` +
		`setsid env -i sh -c 'echo $$ > "$0/setsid"; exec sleep 300' "$d" </dev/null >/dev/null 2>&1 & ` +
		`nohup setsid sh -c 'echo $$ > "$0/nohup"; exec sleep 300' "$d" 2>/dev/null & ` +
		`sh -c 'sh -c "echo \$\$ > \"$0/chain\"; trap \"\" TERM; exec sleep 300" "$0" & exit 0' "$d" & ` +
		`until [ $(ls "$d" | wc -l) -ge 4 ]; do sleep 0.01; done; `
	writeFile(t, filepath.Join(ws, "vx.workspace.ts"), `import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({
  projects: ['packages/*'],
  passThroughEnv: ['PIDS'],
  tasks: {
    leave: { command: `+strconv.Quote(leave+`echo left`)+`, cache: false },
    fail: { command: `+strconv.Quote(leave+`exit 3`)+`, cache: false },
    hang: { command: `+strconv.Quote(leave+`trap '' TERM; sleep 300 & wait`)+`, cache: false },
  },
})
`)
	writeFile(t, filepath.Join(ws, ".gitignore"), ".vx/\npids/\n")
	for i := range projects {
		writeFile(t, filepath.Join(ws, "packages", fmt.Sprintf("p%d", i), "package.json"), fmt.Sprintf(`{ "name": "p%d" }`, i))
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = ws, crashEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	t.Cleanup(func() { killPidFiles(pidsDir) })

	for i := range runs {
		mode := []string{"finish", "term", "term-term"}[i%3]
		if err := os.RemoveAll(pidsDir); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "run", "leave", "fail", "--concurrency", strconv.Itoa(3*projects), "--format", "json")
		if mode != "finish" {
			cmd.Args = append(cmd.Args, "hang")
		}
		cmd.Dir, cmd.Env = ws, append(crashEnv(), "PIDS="+pidsDir)
		var stdout strings.Builder
		cmd.Stdout = &stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if mode != "finish" {
			// Every task has left its processes: 3 tasks × 8 projects × 4 pid files.
			waitFiles(t, pidsDir, 3*projects*4)
			_ = cmd.Process.Signal(syscall.SIGTERM)
			if mode == "term-term" {
				time.Sleep(50 * time.Millisecond)
				_ = cmd.Process.Signal(syscall.SIGTERM)
			}
		}
		_ = cmd.Wait()
		// No wait: when vx has exited, nothing any task started may be alive.
		if alive := alivePidFiles(pidsDir); len(alive) > 0 {
			killPidFiles(pidsDir)
			t.Fatalf("run %d (%s): processes alive after vx exited: %v", i, mode, alive)
		}
		var sum struct {
			Status string `json:"status"`
			Tasks  []struct {
				Status string `json:"status"`
			} `json:"tasks"`
		}
		if err := json.Unmarshal([]byte(stdout.String()), &sum); err != nil || len(sum.Tasks) == 0 {
			t.Fatalf("run %d (%s): summary %v: %.500s", i, mode, err, stdout.String())
		}
		if mode != "finish" && sum.Status != "cancelled" {
			t.Errorf("run %d (%s): status %q, want cancelled", i, mode, sum.Status)
		}
	}
}

// pidFiles lists the files under dir.
func pidFiles(dir string) []string {
	var files []string
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return nil
	})
	return files
}

// waitFiles waits until dir holds n files.
func waitFiles(t *testing.T, dir string, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		files := pidFiles(dir)
		if len(files) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %d files, want %d", dir, len(files), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alivePidFiles lists the live processes (zombies are dead) named by the files under dir.
func alivePidFiles(dir string) []string {
	var alive []string
	for _, f := range pidFiles(dir) {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		pid := strings.TrimSpace(string(data))
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			continue
		}
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && i+2 < len(stat) && stat[i+2] != 'Z' {
			alive = append(alive, filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f)+"="+pid)
		}
	}
	return alive
}

// killPidFiles kills the processes named by the files under dir.
func killPidFiles(dir string) {
	for _, f := range pidFiles(dir) {
		data, _ := os.ReadFile(f)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 1 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
