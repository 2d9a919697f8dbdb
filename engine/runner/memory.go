package runner

import (
	"context"
	"slices"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/resources"
	"github.com/vzn/vx/engine/store"
)

// reserve sets each node's memory reservation: the largest peak RSS of its last resources.EstimateWindow
// executions that ran its command; for a task with none, the workspace's taskMemory, else the median of the other
// tasks' peaks, else resources.DefaultTaskMemory. A persistent task reserves nothing: it takes no worker
// either, and holding memory for a server's whole life would starve what it serves.
func reserve(nodes []*node, peaks map[string]int64, taskMemory int64) {
	var known []int64
	for _, n := range nodes {
		if p, ok := peaks[n.task.ID]; ok && p > 0 {
			known = append(known, p)
		}
	}
	fallback, from := int64(resources.DefaultTaskMemory), resources.ReserveFromDefault
	switch {
	case taskMemory > 0:
		fallback, from = taskMemory, resources.ReserveFromConfig
	case len(known) > 0:
		slices.Sort(known)
		fallback, from = known[len(known)/2], resources.ReserveFromMedian
	}
	for _, n := range nodes {
		switch p, ok := peaks[n.task.ID]; {
		case n.task.Persistent || n.task.IsGroup():
			n.reserve, n.reserveFrom = 0, ""
		case ok:
			n.reserve, n.reserveFrom = p, resources.ReserveFromHistory
		default:
			n.reserve, n.reserveFrom = fallback, from
		}
	}
}

// memoEstimates reads what the scheduler plans from, for the nodes — each task's last
// resources.EstimateWindow executions that ran its command, through recent (a plan's memo, the
// runs a vx mcp handed, or st alone) — and sets every node's priority (from the p50 of those that
// passed) and reservation (the largest peak RSS of them all). It answers the p50s.
func memoEstimates(ctx context.Context, st *store.Store, ws *graph.Workspace, nodes []*node,
	recent func(ctx context.Context, st *store.Store, ids []string) (map[string][]store.CommandRun, error)) (map[string]int64, error) {
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		ids[i] = n.task.ID
	}
	runs, err := recent(ctx, st, ids)
	if err != nil {
		return nil, err
	}
	p50s, peaks := resources.Estimates(runs)
	tm, err := resources.TaskMemory(ws)
	if err != nil {
		return nil, err
	}
	prioritize(nodes, p50s)
	reserve(nodes, peaks, tm)
	return p50s, nil
}
