package resources

import (
	"strings"
	"testing"

	"github.com/vzn/vx/engine/graph"
)

func TestMemoryBudgetSources(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	ws := &graph.Workspace{MemoryBudget: "2GiB"}
	for _, tc := range []struct {
		flag, env string
		ws        *graph.Workspace
		want      int64
		source    string
	}{
		{"1G", "3G", ws, 1 << 30, MemoryFromFlag},
		{"", "3G", ws, 3 << 30, MemoryFromEnv},
		{"", "", ws, 2 << 30, MemoryFromConfig},
	} {
		env["VX_MEMORY_BUDGET"] = tc.env
		n, source, err := MemoryBudget(tc.flag, tc.ws, getenv)
		if err != nil || n != tc.want || source != tc.source {
			t.Errorf("MemoryBudget(%q, env %q) = %d %s %v, want %d %s", tc.flag, tc.env, n, source, err, tc.want, tc.source)
		}
	}
	env["VX_MEMORY_BUDGET"] = ""
	if n, source, err := MemoryBudget("", nil, getenv); err != nil || (source != MemoryFromMachine && source != MemoryFromCgroup && source != MemoryUnknown) || (source != MemoryUnknown && n <= 0) {
		t.Errorf("default budget %d %s %v", n, source, err)
	}
	if _, _, err := MemoryBudget("lots", nil, getenv); err == nil || !strings.Contains(err.Error(), "--memory-budget") {
		t.Errorf("bad flag: %v", err)
	}
}
