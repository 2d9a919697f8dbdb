package resources

import (
	"strings"

	"github.com/vzn/vx/engine/bytesize"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/vxerr"
)

// Memory budget sources, as vx info and the run summary report them.
const (
	MemoryFromFlag    = "flag"    // --memory-budget
	MemoryFromEnv     = "env"     // VX_MEMORY_BUDGET
	MemoryFromConfig  = "config"  // memoryBudget in vx.workspace.ts
	MemoryFromCgroup  = "cgroup"  // the memory limit of vx's cgroup
	MemoryFromMachine = "machine" // the machine's memory
	MemoryUnknown     = "unknown" // none of these: tasks are not held back by memory
)

// MemoryBudget answers how much memory the tasks of a run may reserve together and where that
// figure came from: the --memory-budget flag when given, else VX_MEMORY_BUDGET, else memoryBudget
// in vx.workspace.ts (ws may be nil), else the memory limit of the cgroup vx runs in, else the
// machine's memory. Sizes are bytes or carry a unit (512MiB, 6G). A budget of 0 (MemoryUnknown) holds no
// task back.
func MemoryBudget(flag string, ws *graph.Workspace, getenv func(string) string) (int64, string, error) {
	parse := func(what, v string) (int64, error) {
		n, err := bytesize.Parse(v, bytesize.Positive)
		if err != nil {
			return 0, vxerr.Usagef("%s %q: want a size such as 6GiB or 512MiB", what, v)
		}
		return n, nil
	}
	if v := strings.TrimSpace(flag); v != "" {
		n, err := parse("--memory-budget", v)
		return n, MemoryFromFlag, err
	}
	if v := strings.TrimSpace(getenv("VX_MEMORY_BUDGET")); v != "" {
		n, err := parse("VX_MEMORY_BUDGET", v)
		return n, MemoryFromEnv, err
	}
	if ws != nil && ws.MemoryBudget != "" {
		n, err := parse("memoryBudget", ws.MemoryBudget)
		return n, MemoryFromConfig, err
	}
	n, cgroup, err := availableMemoryBytes()
	switch {
	case err != nil || n <= 0:
		return 0, MemoryUnknown, nil
	case cgroup:
		return n, MemoryFromCgroup, nil
	}
	return n, MemoryFromMachine, nil
}

// TaskMemory answers the workspace's taskMemory (what a task without a history reserves) in
// bytes; 0 when not set.
func TaskMemory(ws *graph.Workspace) (int64, error) {
	if ws == nil || ws.TaskMemory == "" {
		return 0, nil
	}
	n, err := bytesize.Parse(ws.TaskMemory, bytesize.Positive)
	if err != nil {
		return 0, vxerr.Usagef("taskMemory %q: want a size such as 1GiB", ws.TaskMemory)
	}
	return n, nil
}
