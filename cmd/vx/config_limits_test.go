package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vzn/vx/internal/testkit"
)

// configLimitAttacks are the configs of issue 37 that ran past the documented bounds inside the
// runtime's native code (47–102 s until the OS killed vx, 4.2 GB, 2.8 GB). The JSON one imports
// big.json, which bigJSON writes.
var configLimitAttacks = map[string]string{
	"stringify": "let a: any = [1]\nfor (let i = 0; i < 40; i++) a = [a, a]\nconst s = JSON.stringify(a)\nexport default { projects: [s] }\n",
	"flat":      "let a: any = [1]\nfor (let i = 0; i < 40; i++) a = [a, a]\nexport default { projects: a.flat(Infinity) }\n",
	"arrayFrom": "export default { projects: Array.from({ length: 2 ** 26 }) }\n",
	"json":      "import big from './big.json'\nexport default { projects: big.map((p: any) => p.name).slice(0, 0) }\n",
}

// configLimitError is the one error a config that passes a bound ends with: a limit named, or
// the config's own position with the in-process memory bound.
func configLimitError(msg string) bool {
	return strings.Contains(msg, "config evaluation ran longer than 5s and was stopped") ||
		strings.Contains(msg, "config evaluation used more than 1 GiB and was stopped") ||
		strings.Contains(msg, "1 GiB memory bound")
}

// bigJSON writes a JSON file of about 55 MB of project-like records.
func bigJSON(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("[")
	for i := range 400_000 {
		if i > 0 {
			w.WriteString(",")
		}
		fmt.Fprintf(w, `{"name":"project-%d","tags":["%s","%s"],"weight":%d.5,"owner":{"team":"%s"}}`,
			i, strings.Repeat("a", 20), strings.Repeat("b", 20), i, strings.Repeat("t", 30))
	}
	w.WriteString("]")
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		t.Fatal(err)
	}
}

// attackWorkspace lays out a workspace whose config is the named attack.
func attackWorkspace(t *testing.T, name string) string {
	t.Helper()
	dir := testkit.TempTree(t, map[string]string{"vx.workspace.ts": configLimitAttacks[name]})
	if name == "json" {
		bigJSON(t, filepath.Join(dir, "big.json"))
	}
	return dir
}

// peakGroup is a memory cgroup the test starts vx in, so that the kernel counts vx and every
// process it starts together; where none can be made, the kernel's peak RSS of vx and of its
// largest child stands in.
type peakGroup struct{ dir, peakFile string }

// newPeakGroup makes a memory cgroup under the test's own, or answers nil.
func newPeakGroup(t *testing.T) *peakGroup {
	t.Helper()
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	for line := range strings.Lines(string(data)) {
		f := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(f) != 3 {
			continue
		}
		var parent, peak string
		switch {
		case strings.Contains(","+f[1]+",", ",memory,"):
			parent, peak = filepath.Join("/sys/fs/cgroup/memory", f[2]), "memory.max_usage_in_bytes"
		case f[0] == "0" && f[1] == "":
			parent, peak = filepath.Join("/sys/fs/cgroup", f[2]), "memory.peak"
		default:
			continue
		}
		dir, err := os.MkdirTemp(parent, "vx-test-")
		if err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, peak)); err != nil {
			os.Remove(dir)
			continue
		}
		g := &peakGroup{dir: dir, peakFile: filepath.Join(dir, peak)}
		t.Cleanup(func() {
			for range 100 {
				if os.Remove(dir) == nil {
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
		return g
	}
	return nil
}

// command is vx with args, started inside the group.
func (g *peakGroup) command(bin, dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("/bin/sh", append([]string{"-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, g.dir, bin}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "VX_TEST_MAIN=1")
	return cmd
}

func (g *peakGroup) peak(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile(g.peakFile)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// runVX runs vx with args in dir and answers its stderr and the peak memory of it and its
// children together.
func runVX(t *testing.T, bin, dir string, args ...string) (stderr string, peak int64, err error) {
	t.Helper()
	var cmd *exec.Cmd
	g := newPeakGroup(t)
	if g != nil {
		cmd = g.command(bin, dir, args...)
	} else {
		cmd = exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(cleanEnv(), "VX_TEST_MAIN=1")
	}
	var buf bytes.Buffer
	cmd.Stderr = &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The acceptance bound on the time: past it vx is killed, and its error is not the limit's.
	stop := time.AfterFunc(configLimitWithin, func() { _ = cmd.Process.Kill() })
	err = cmd.Wait()
	stop.Stop()
	if g != nil {
		peak = g.peak(t)
	} else if cmd.ProcessState != nil {
		// ru_maxrss of a reaped process is the larger of its own and its children's: twice it
		// bounds the two together.
		peak = 2 * int64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) << 10
	}
	return buf.String(), peak, err
}

// configLimitWithin bounds how long a vx on an attack may take before the test kills it.
const configLimitWithin = 15 * time.Second

// maxConfigPeak is the acceptance bound on the memory of the vx processes together.
const maxConfigPeak = 1536 << 20

// Each config of issue 37 that ran the machine out of memory ends `vx show` and `vx run` with one
// error naming the limit it passed, the vx processes together staying under 1.5 GiB (their
// cgroup's peak). Before, vx ran until the OS killed it.
func TestConfigLimitsHoldForShowAndRun(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the kernel's bounds are Linux's")
	}
	t.Parallel()
	bin := plainVX(t)
	for _, name := range []string{"stringify", "flat", "arrayFrom", "json"} {
		t.Run(name, func(t *testing.T) {
			// Each attack spends its 5 s bound mostly waiting on the one child it starts.
			t.Parallel()
			dir := attackWorkspace(t, name)
			for _, args := range [][]string{{"show"}, {"run", "build"}} {
				stderr, peak, err := runVX(t, bin, dir, args...)
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() != 2 {
					t.Errorf("vx %s: %v, want exit status 2; stderr:\n%s", args[0], err, stderr)
				}
				lines := strings.Split(strings.TrimSpace(stderr), "\n")
				if len(lines) != 1 || !configLimitError(lines[0]) || !strings.HasPrefix(lines[0], "vx: vx.workspace.ts") {
					t.Errorf("vx %s stderr = %q, want one error naming vx.workspace.ts and a limit", args[0], stderr)
				}
				t.Logf("vx %s: peak %d MB: %s", args[0], peak>>20, strings.TrimSpace(stderr))
				if peak >= maxConfigPeak {
					t.Errorf("vx %s: the vx processes reached %d MB together, over 1.5 GiB", args[0], peak>>20)
				}
			}
		})
	}
}

// Under vx mcp, a config that passes a bound answers every tool that needs the config with the
// limit's error (isError), and the server keeps serving: once the file is fixed, the next call is
// answered with no restart. The server and its children stay under 1.5 GiB together. Before, the
// server itself died and listTasks never answered.
func TestConfigLimitsHoldUnderMCP(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the kernel's bounds are Linux's")
	}
	t.Parallel()
	bin := plainVX(t)
	g := newPeakGroup(t)
	if g == nil {
		t.Skip("no memory cgroup to measure the server's peak in")
	}
	dir := attackWorkspace(t, "json")
	fixed := "import { mcp } from '@vzn/vx-mcp'\nexport default { projects: ['app'], plugins: [mcp()], tasks: { build: { command: 'true' } } }\n"
	testkit.WriteTree(t, dir, map[string]string{"vx.workspace.ts": fixed, "app/package.json": `{"name":"app"}`})
	cs := mcpSessionCommand(t, g.command(bin, dir, "mcp"))
	for _, name := range []string{"stringify", "flat", "arrayFrom", "json"} {
		testkit.WriteTree(t, dir, map[string]string{"vx.workspace.ts": configLimitAttacks[name]})
		for _, tool := range []string{"listTasks", "getConfig"} {
			_, text, isErr := call(t, cs, tool, map[string]any{})
			if !isErr || !configLimitError(text) || strings.Contains(text, "\n") {
				t.Errorf("%s: %s = %q (isError %v), want one line naming a limit", name, tool, text, isErr)
			}
		}
		testkit.WriteTree(t, dir, map[string]string{"vx.workspace.ts": fixed})
		structured, text, isErr := call(t, cs, "listTasks", map[string]any{})
		if isErr || !strings.Contains(string(structured), "app#build") {
			t.Errorf("%s fixed: listTasks = %s %q (isError %v), want app#build", name, structured, text, isErr)
		}
	}
	peak := g.peak(t)
	t.Logf("vx mcp and its children: peak %d MB", peak>>20)
	if peak >= maxConfigPeak {
		t.Errorf("vx mcp reached %d MB with its children, over 1.5 GiB", peak>>20)
	}
}

// mcpSessionCommand connects the Go SDK client to the vx mcp that cmd starts.
func mcpSessionCommand(t *testing.T, cmd *exec.Cmd) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stderr := &testkit.SyncBuffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "vx-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to vx mcp: %v\nstderr:\n%s", err, stderr)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		if t.Failed() {
			t.Logf("vx mcp stderr:\n%s", stderr)
		}
	})
	return cs
}
