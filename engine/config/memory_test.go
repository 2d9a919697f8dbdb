package config

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/vxerr"
)

// testMemoryLimit is the lowered bound the memory tests evaluate under.
const testMemoryLimit = 64 << 20

// evalUnderLimit evaluates the workspace config of files under testMemoryLimit and answers its
// error and the bytes the evaluation allocated.
func evalUnderLimit(t *testing.T, files map[string]string) (uint64, error) {
	t.Helper()
	root := writeFiles(t, files)
	s := NewSession(Options{Root: root, Version: "test", Timeout: time.Minute, MemoryLimit: testMemoryLimit})
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := s.EvalWorkspace(context.Background(), "vx.workspace.ts")
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, err
}

// A config that keeps allocating is interrupted once the heap has grown past the bound, with an
// error that names the file and says memory; without the bound it ran on (the reported case: 3.3
// GB in 12 s before the timeout). Judged by the bytes allocated, never by time.
func TestMemoryBoundInterruptsAConfig(t *testing.T) {
	allocated, err := evalUnderLimit(t, map[string]string{
		"vx.workspace.ts": "const names: string[] = []\nfor (let i = 0; i < 4e5; i++) names.push('project-'.repeat(128) + i)\nexport default { projects: names }\n",
	})
	wantMemoryError(t, err, "vx.workspace.ts:2:")
	// The loop would allocate about 400 MB; sampling lets it run a little past the bound, no more.
	if allocated > 4*testMemoryLimit {
		t.Errorf("the evaluation allocated %d MB under a %d MB bound", allocated>>20, testMemoryLimit>>20)
	}
}

// One native call that would make a huge value from a small one (`'ab'.repeat(n).split("")`: the
// reported config, scaled down) is refused before it runs, since goja cannot interrupt a built-in
// while it runs.
func TestMemoryBoundChecksBeforeAmplifyingBuiltins(t *testing.T) {
	for name, src := range map[string]string{
		"split":      "const parts = 'ab'.repeat(2 ** 21).split('')\nexport default { projects: parts }\n",
		"repeat":     "const s = 'x'.repeat(2 ** 20)\nconst big = s.repeat(2 ** 7)\nexport default { projects: [big] }\n",
		"padStart":   "const big = 'x'.padStart(2 ** 27)\nexport default { projects: [big] }\n",
		"fill":       "const a = new Array(2 ** 23)\nconst filled = a.fill(0)\nexport default { projects: filled }\n",
		"join":       "const s = 'x'.repeat(2 ** 16)\nconst big = new Array(2 ** 12).fill(s).join('')\nexport default { projects: [big] }\n",
		"replaceAll": "const s = 'ab'.repeat(2 ** 12)\nconst big = s.replaceAll('a', s)\nexport default { projects: [big] }\n",
	} {
		t.Run(name, func(t *testing.T) {
			allocated, err := evalUnderLimit(t, map[string]string{"vx.workspace.ts": src})
			wantMemoryError(t, err, "vx.workspace.ts:")
			if allocated > testMemoryLimit {
				t.Errorf("the evaluation allocated %d MB under a %d MB bound", allocated>>20, testMemoryLimit>>20)
			}
		})
	}
}

// A value doubled in a loop — by the + operator, which no built-in check sees, or by concat — is
// stopped while one more step could still not pass the bound: the reported config (`s = s + s`) reached 2.1 GB
// under the 1 GiB bound, since goja cannot interrupt the concatenation that passes it.
func TestMemoryBoundStopsADoublingString(t *testing.T) {
	for name, src := range map[string]string{
		"plus":     "let s = 'ab'\nwhile (true) s = s + s\nexport default { projects: [s] }\n",
		"template": "let s = 'ab'\nwhile (true) s = `${s}${s}`\nexport default { projects: [s] }\n",
		"unicode":  "let s = 'é'\nwhile (true) s += s\nexport default { projects: [s] }\n",
		"concat":   "let s = 'ab'\nwhile (true) s = s.concat(s, s)\nexport default { projects: [s] }\n",
		"arrays":   "let a = [0]\nwhile (true) a = a.concat(a)\nexport default { projects: a }\n",
	} {
		t.Run(name, func(t *testing.T) {
			allocated, err := evalUnderLimit(t, map[string]string{"vx.workspace.ts": src})
			wantMemoryError(t, err, "vx.workspace.ts:2:")
			// The steps allocate about twice the last value (an array's slice grows by
			// doubling too); the last never passes the bound.
			if allocated > 4*testMemoryLimit {
				t.Errorf("the evaluation allocated %d MB under a %d MB bound", allocated>>20, testMemoryLimit>>20)
			}
		})
	}
}

// A config within the bound is answered, builtins and all.
func TestMemoryBoundLeavesSmallConfigsAlone(t *testing.T) {
	_, err := evalUnderLimit(t, map[string]string{
		"vx.workspace.ts": "const p = 'a,b,c'.split(',').map(s => s.repeat(3).padEnd(5, '-'))\nexport default { projects: p.concat(new Array(3).fill('z').join('').split('')) }\n",
	})
	if err != nil {
		t.Fatal(err)
	}
}

func wantMemoryError(t *testing.T, err error, at string) {
	t.Helper()
	ce, ok := err.(*vxerr.ConfigError)
	if !ok {
		t.Fatalf("err = %v (%T), want a config error", err, err)
	}
	if msg := ce.Error(); !strings.HasPrefix(msg, at) || !strings.Contains(msg, "memory") || !strings.Contains(msg, "64 MiB") {
		t.Fatalf("err = %q, want it at %s, saying memory and the 64 MiB bound", msg, at)
	}
}
