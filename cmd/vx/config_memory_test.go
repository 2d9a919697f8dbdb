package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// A config that doubles a string in a loop is stopped under the memory bound the docs promise:
// vx exits non-zero with an error naming the 1 GiB bound, its peak RSS (the kernel's, through
// rusage) well under 1.5 GB. Before, one concatenation past the bound ran to 2.1–4.2 GB, since
// goja cannot interrupt it and the heap was checked only after it.
func TestGrowingConfigStaysUnderTheMemoryBound(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ru_maxrss in kilobytes is Linux's")
	}
	bin := plainVX(t)
	for name, grow := range map[string]string{
		"plus":   "let s = 'ab'\nwhile (true) s = s + s\n",
		"concat": "let s = 'ab'\nwhile (true) s = s.concat(s)\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "vx.workspace.ts"), []byte(grow+"export default { projects: [s] }\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "show")
			cmd.Dir = dir
			cmd.Env = append(cleanEnv(), "VX_TEST_MAIN=1") // the test binary is vx with it
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("vx show on a growing config: %v, want a non-zero exit", err)
			}
			rss := int64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) << 10
			t.Logf("peak RSS %d MB: %s", rss>>20, strings.TrimSpace(stderr.String()))
			if rss >= 1500<<20 {
				t.Errorf("vx reached %d MB of RSS evaluating a growing config, over 1.5 GB", rss>>20)
			}
			if msg := stderr.String(); !strings.Contains(msg, "vx.workspace.ts:2:") || !strings.Contains(msg, "1 GiB memory bound") {
				t.Errorf("stderr = %q, want the position and the 1 GiB bound named", msg)
			}
		})
	}
}

// plainVX is vx without the race detector, whose shadow memory would count in the RSS: the test
// binary itself when it has none, else vx built for the test.
func plainVX(t *testing.T) string {
	t.Helper()
	if !raceEnabled {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		return exe
	}
	bin := filepath.Join(t.TempDir(), "vx")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = cleanEnv()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build vx: %v\n%s", err, out)
	}
	return bin
}
