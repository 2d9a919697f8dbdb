package runner

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/vzn/vx/engine/bytesize"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/store"
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

// DefaultTaskMemory is what a task reserves when neither its history nor the workspace's
// (another task's recorded peak) nor taskMemory says more.
const DefaultTaskMemory = 512 << 20

// Reservation sources: a task's own recorded peak, the median of the others', taskMemory, or
// DefaultTaskMemory.
const (
	ReserveFromHistory = "history"
	ReserveFromMedian  = "median"
	ReserveFromConfig  = "config"
	ReserveFromDefault = "default"
)

// EstimateWindow is how many of a task's last executions that ran its command the scheduler
// plans from: their p50 (of those that passed) and their largest peak RSS.
const EstimateWindow = history.P50Window

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

// reserve sets each node's memory reservation: the largest peak RSS of its last EstimateWindow
// executions that ran its command; for a task with none, the workspace's taskMemory, else the median of the other
// tasks' peaks, else DefaultTaskMemory. A persistent task reserves nothing: it takes no worker
// either, and holding memory for a server's whole life would starve what it serves.
func reserve(nodes []*node, peaks map[string]int64, taskMemory int64) {
	var known []int64
	for _, n := range nodes {
		if p, ok := peaks[n.task.ID]; ok && p > 0 {
			known = append(known, p)
		}
	}
	fallback, from := int64(DefaultTaskMemory), ReserveFromDefault
	switch {
	case taskMemory > 0:
		fallback, from = taskMemory, ReserveFromConfig
	case len(known) > 0:
		slices.Sort(known)
		fallback, from = known[len(known)/2], ReserveFromMedian
	}
	for _, n := range nodes {
		switch p, ok := peaks[n.task.ID]; {
		case n.task.Persistent:
			n.reserve, n.reserveFrom = 0, ""
		case ok:
			n.reserve, n.reserveFrom = p, ReserveFromHistory
		default:
			n.reserve, n.reserveFrom = fallback, from
		}
	}
}

// taskMemory reads the workspace's taskMemory; 0 when not set.
func taskMemory(ws *graph.Workspace) (int64, error) {
	if ws == nil || ws.TaskMemory == "" {
		return 0, nil
	}
	n, err := bytesize.Parse(ws.TaskMemory, bytesize.Positive)
	if err != nil {
		return 0, vxerr.Usagef("taskMemory %q: want a size such as 1GiB", ws.TaskMemory)
	}
	return n, nil
}

// estimates reads what the scheduler plans from, for the nodes — each task's last EstimateWindow
// executions that ran its command, in one query a task — and sets every node's priority (from the
// p50 of those that passed) and reservation (the largest peak RSS of them all). It answers the p50s.
func estimates(ctx context.Context, st *store.Store, ws *graph.Workspace, nodes []*node) (map[string]int64, error) {
	return memoEstimates(ctx, st, ws, nodes, nil)
}

// memoEstimates is estimates with the history read through a plan's memo (nil: from st).
func memoEstimates(ctx context.Context, st *store.Store, ws *graph.Workspace, nodes []*node, memo *memoView) (map[string]int64, error) {
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		ids[i] = n.task.ID
	}
	recent, err := memo.recentRuns(ctx, st, ids)
	if err != nil {
		return nil, err
	}
	p50s := make(map[string]int64, len(recent))
	peaks := make(map[string]int64, len(recent))
	for id, runs := range recent {
		var passed []time.Duration
		var peak int64
		for _, c := range runs {
			if history.CountsForDuration(c.Status) {
				passed = append(passed, c.Duration)
			}
			peak = max(peak, c.PeakRSSBytes)
		}
		if len(passed) > 0 {
			p50s[id] = history.P50(passed)
		}
		peaks[id] = peak
	}
	tm, err := taskMemory(ws)
	if err != nil {
		return nil, err
	}
	prioritize(nodes, p50s)
	reserve(nodes, peaks, tm)
	return p50s, nil
}
