package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/vzn/vx/internal/testkit"
)

// A config that doubles a string in a loop is stopped under the memory bound the docs promise:
// vx exits 2 with one error naming the 1 GiB bound — the kernel's, which stops the evaluating
// child, or the child's own sampling, which names the position — and vx with its child stays
// under 1.5 GB. Before, one concatenation past the bound ran to 2.1–4.2 GB, since goja cannot
// interrupt it and the heap was checked only after it.
func TestGrowingConfigStaysUnderTheMemoryBound(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the kernel's bounds are Linux's")
	}
	// Not in parallel: the doubling must reach the memory bound inside the 5 s time bound, which
	// the config limit tests' busy children beside it can starve it of.
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
			stderr, peak, err := runVX(t, bin, dir, "show")
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 {
				t.Fatalf("vx show on a growing config: %v, want exit status 2", err)
			}
			t.Logf("peak %d MB: %s", peak>>20, strings.TrimSpace(stderr))
			if peak >= maxConfigPeak {
				t.Errorf("vx reached %d MB evaluating a growing config, over 1.5 GiB", peak>>20)
			}
			if msg := strings.TrimSpace(stderr); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "vx: vx.workspace.ts") || !strings.Contains(msg, "1 GiB") {
				t.Errorf("stderr = %q, want one error naming the file and the 1 GiB bound", msg)
			}
		})
	}
}

// plainVX is vx without the race detector, whose shadow memory would count in the RSS: the test
// binary itself when it has none, else vx as testkit.Binary builds it once for every test.
func plainVX(t *testing.T) string {
	t.Helper()
	if !raceEnabled {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		return exe
	}
	return testkit.Binary(t, "cmd/vx")
}
