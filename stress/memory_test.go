package stress

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// hogSource is a task that holds memory: it allocates its first argument in MiB, writes every
// page of it (so that it is resident, not merely reserved), holds it for its second argument in
// milliseconds, and exits.
const hogSource = `package main

import (
	"os"
	"strconv"
	"time"
)

var held []byte

func main() {
	mib, _ := strconv.Atoi(os.Args[1])
	ms, _ := strconv.Atoi(os.Args[2])
	held = make([]byte, mib<<20)
	for i := 0; i < len(held); i += 4096 {
		held[i] = 1
	}
	time.Sleep(time.Duration(ms) * time.Millisecond)
	held[len(held)-1] = 2
}
`

// TestMemoryBudget runs eight tasks that each hold 1 GiB (64 MiB under -short) on 8 workers with
// a budget of three tasks' worth, twice, sampling the summed RSS of the running tasks from /proc.
// The first run knows no peak: each task reserves the default, and the run learns the peaks. The
// second reserves them: the sum never exceeds the budget plus one task's slack, and it finishes.
func TestMemoryBudget(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("samples RSS from /proc")
	}
	taskMiB, holdMs := 1024, 1500
	if testing.Short() {
		taskMiB, holdMs = 64, 400
	}
	budget := int64(3*taskMiB) << 20
	bin := buildVX(t)
	dir := t.TempDir()
	hog := filepath.Join(dir, "bin", "hog")
	writeFile(t, filepath.Join(dir, "hogsrc", "main.go"), hogSource)
	writeFile(t, filepath.Join(dir, "hogsrc", "go.mod"), "module hog\n\ngo 1.22\n")
	build := exec.Command("go", "build", "-o", hog, ".")
	build.Dir = filepath.Join(dir, "hogsrc")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the hog: %v\n%s", err, out)
	}

	ws := filepath.Join(dir, "ws")
	writeFile(t, filepath.Join(ws, "vx.workspace.ts"), fmt.Sprintf(`export default {
  projects: ['packages/*'],
  tasks: { hold: { command: %q, cache: false } },
}
`, fmt.Sprintf("%s %d %d", hog, taskMiB, holdMs)))
	for i := range 8 {
		writeFile(t, filepath.Join(ws, "packages", fmt.Sprint("p", i), "package.json"), fmt.Sprintf(`{"name": "p%d"}`, i))
	}

	run := func(name string) (maxSum int64, reserved map[string]int64) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		var wg sync.WaitGroup
		stop := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					maxSum = max(maxSum, summedRSS(hog))
				}
			}
		}()
		cmd := exec.CommandContext(ctx, bin, "run", "hold", "--concurrency", "8", "--memory-budget", strconv.FormatInt(budget, 10), "--format", "json")
		cmd.Dir, cmd.Env = ws, crashEnv()
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		close(stop)
		wg.Wait()
		if err != nil {
			t.Fatalf("%s: vx run: %v\n%s", name, err, stderr.String())
		}
		var sum struct {
			OK    bool `json:"ok"`
			Tasks []struct {
				TaskID        string `json:"taskId"`
				PeakRssBytes  int64  `json:"peakRssBytes"`
				ReservedBytes int64  `json:"reservedBytes"`
			} `json:"tasks"`
			Memory struct {
				BudgetBytes int64  `json:"budgetBytes"`
				Source      string `json:"source"`
			} `json:"memory"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil || !sum.OK || len(sum.Tasks) != 8 {
			t.Fatalf("%s: summary %s (%v)", name, stdout.String(), err)
		}
		if sum.Memory.BudgetBytes != budget || sum.Memory.Source != "flag" {
			t.Errorf("%s: memory %+v, want %d from the flag", name, sum.Memory, budget)
		}
		reserved = map[string]int64{}
		for _, task := range sum.Tasks {
			reserved[task.TaskID] = task.ReservedBytes
			if task.PeakRssBytes < int64(taskMiB)<<20 {
				t.Errorf("%s: %s peaked at %d MiB, want at least %d", name, task.TaskID, task.PeakRssBytes>>20, taskMiB)
			}
		}
		t.Logf("%s: summed RSS of running tasks peaked at %d MiB (budget %d MiB); reservations %v MiB", name, maxSum>>20, budget>>20, mib(reserved))
		return maxSum, reserved
	}

	_, first := run("first run")
	for id, r := range first {
		if r != 512<<20 {
			t.Errorf("first run: %s reserved %d MiB, want the default 512", id, r>>20)
		}
	}
	maxSum, second := run("second run")
	for id, r := range second {
		if r < int64(taskMiB)<<20 {
			t.Errorf("second run: %s reserved %d MiB, want its peak (at least %d MiB)", id, r>>20, taskMiB)
		}
	}
	if slack := int64(taskMiB) << 20; maxSum > budget+slack {
		t.Errorf("second run: the running tasks held %d MiB at once, over the budget %d MiB plus one task's %d MiB",
			maxSum>>20, budget>>20, slack>>20)
	}
}

// summedRSS is the summed VmRSS of the live processes running the program at path.
func summedRSS(path string) int64 {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var total int64
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || exe != path {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				if f := strings.Fields(rest); len(f) > 0 {
					kib, _ := strconv.ParseInt(f[0], 10, 64)
					total += kib << 10
				}
			}
		}
	}
	return total
}

func mib(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v >> 20
	}
	return out
}
