// Package graphview draws what vx knows as pictures: the task graph of a selection (`vx graph`:
// DOT, Mermaid, JSON, or a page) and a recorded run as a timeline (`vx last --format html`). The
// layout is computed here, in Go (layered by dependency depth, crossings reduced by barycenter
// sweeps), so that a page only draws. A page is one self-contained HTML file: its script and style
// are inlined, its data a JSON document inside it, and its content security policy lets it load
// nothing, so that it opens from file:// offline.
package graphview

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/runner"
	"github.com/vzn/vx/engine/runrequest"
	"github.com/vzn/vx/engine/store"
)

// StatsRuns is how many recent runs a node's statistics (p50, p99, hit rate, last status) are
// taken from.
const StatsRuns = 50

// Graph is `vx graph --format json`: the task graph of a selection, its predictions and its
// layout. Tasks are in dependency order (as vx run --dry lists them), edges sorted.
type Graph struct {
	// Kind is "graph" (a page's data says which page it is).
	Kind string `json:"kind"`
	// Title says what was selected, as the command line said it.
	Title string `json:"title"`
	Tasks []Node `json:"tasks"`
	Edges []Edge `json:"edges"`
	// CriticalPath is the plan's: the chain of tasks predicted to end last, first task first.
	CriticalPath []string `json:"criticalPath"`
	// WallMs and WorkMs are the plan's predicted wall time and work; Workers its worker count.
	WallMs  int64 `json:"wallMs"`
	WorkMs  int64 `json:"workMs"`
	Workers int   `json:"workers"`
	// Projects are the selected projects with their tags, sorted by name.
	Projects []Project `json:"projects"`
	// Width and Height bound the layout, in the units of the nodes' X, Y, W and H.
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
	// Layers is how many dependency depths the layout has.
	Layers int `json:"layers"`
}

// Project is a selected project.
type Project struct {
	Name string   `json:"name"`
	Tags []string `json:"tags"`
}

// Node is one task of the graph.
type Node struct {
	ID string `json:"id"`
	// Label is the id as a box shows it: whole, or shortened in its project's name, never in
	// its #task (see shortLabel).
	Label   string `json:"label"`
	Project string `json:"project"`
	Task    string `json:"task"`
	Command string `json:"command"`
	// Inputs are the task's input globs; null means the default, every file of the project git
	// shows. Outputs are its output globs.
	Inputs  []string `json:"inputs"`
	Outputs []string `json:"outputs"`
	// Cache is the plan's predicted cache status (hit or miss); Cacheable is false for a task
	// with cache: false (and a persistent task), which always runs.
	Cache      store.Status `json:"cache"`
	Cacheable  bool         `json:"cacheable"`
	Persistent bool         `json:"persistent"`
	Requested  bool         `json:"requested"`
	Hash       string       `json:"hash"`
	DependsOn  []string     `json:"dependsOn"`
	// P50Ms is the plan's p50 (null: the task never ran and passed); P99Ms, HitRate, LastStatus
	// and Executions come from the last StatsRuns runs (null or empty without any).
	P50Ms      *int64       `json:"p50Ms"`
	P99Ms      *int64       `json:"p99Ms"`
	HitRate    *float64     `json:"hitRate"`
	LastStatus store.Status `json:"lastStatus"`
	Executions int          `json:"executions"`
	// Affected says why the task's project is affected (under --affected).
	Affected *string `json:"affected"`
	// Why is, for a predicted miss, the planned key against the latest recorded one, as vx why
	// compares two runs' keys (runId empty: the planned run); null for a predicted hit.
	Why *history.Why `json:"why"`
	// Critical says that the task is on the critical path.
	Critical bool `json:"critical"`
	// Layer is the task's dependency depth (-1: it has no dependency and no dependent, and sits
	// in the grid below the layers); X, Y, W, H its box.
	Layer int     `json:"layer"`
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	W     float64 `json:"w"`
	H     float64 `json:"h"`
}

// Edge is a dependency: From waits for To. Kind is "^" for a task of another project (a ^task
// dependency or a project#task one), "dependsOn" for a task of the same project. Critical says
// that both ends are consecutive on the critical path.
type Edge struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Kind     string `json:"kind"`
	Critical bool   `json:"critical"`
}

// The kinds of edge.
const (
	EdgeUpstream  = "^"
	EdgeDependsOn = "dependsOn"
)

// Build plans req's selection of ws as vx run --dry does and answers its graph: each task with
// its prediction, its statistics and why it would miss, laid out. title says what was selected.
// It reads the index read-only and creates nothing.
func Build(ctx context.Context, ws *graph.Workspace, req runrequest.Request, title string) (*Graph, error) {
	opts, err := runrequest.Prepare(ctx, ws, req)
	if err != nil {
		return nil, err
	}
	st, err := store.OpenReadOnlyShared(ctx, ws.CacheDir, ws.SharedDir)
	if err != nil {
		return nil, fmt.Errorf("open the state folder: %w", err)
	}
	defer st.Close()
	opts.Store, opts.KeepManifests = st, true
	plan, err := runner.DryRun(ctx, opts)
	if err != nil {
		return nil, err
	}
	stats, err := history.AllStats(ctx, st, StatsRuns)
	if err != nil {
		return nil, err
	}
	g := &Graph{Kind: "graph", Title: title, Tasks: make([]Node, 0, len(plan.Tasks)), Edges: []Edge{},
		CriticalPath: plan.CriticalPath, WallMs: plan.WallMs, WorkMs: plan.WorkMs, Workers: plan.Workers}
	critical := map[string]bool{}
	for _, id := range plan.CriticalPath {
		critical[id] = true
	}
	why := history.NewPlanned(st, plan.Manifests)
	for _, pt := range plan.Tasks {
		n, err := node(ctx, ws, why, pt, stats[pt.TaskID])
		if err != nil {
			return nil, err
		}
		n.Critical = critical[pt.TaskID]
		g.Tasks = append(g.Tasks, n)
	}
	g.Edges = edges(ws, g.Tasks, plan.CriticalPath)
	g.Projects = projects(ws, g.Tasks)
	g.Width, g.Height, g.Layers = layout(g.Tasks, g.Edges)
	return g, nil
}

// node answers a planned task's node, not yet laid out.
func node(ctx context.Context, ws *graph.Workspace, planned *history.Planned, pt runner.PlanTask, s history.TaskStats) (Node, error) {
	t, _ := ws.Task(pt.TaskID)
	n := Node{ID: pt.TaskID, Label: shortLabel(pt.TaskID, maxLabelChars), Project: t.Project, Task: t.Name, Command: pt.Command, Inputs: t.Inputs, Outputs: nonNil(t.Outputs),
		Cache: pt.Cache, Cacheable: pt.Cacheable && !t.Persistent, Persistent: t.Persistent, Requested: pt.Requested,
		Hash: pt.Hash, DependsOn: pt.DependsOn, P50Ms: pt.P50Ms, P99Ms: s.P99Ms, HitRate: s.HitRate,
		LastStatus: s.LastStatus, Executions: s.Executions, Affected: pt.Affected}
	if pt.Cache == store.StatusMiss {
		why, err := planned.Explain(ctx, pt.TaskID, pt.Hash, pt.Cache)
		if err != nil {
			return Node{}, fmt.Errorf("why %s would miss: %w", pt.TaskID, err)
		}
		if !n.Cacheable {
			why.Reason = "it is never cached (" + uncachedReason(t) + "): it always runs; " + why.Reason
		}
		n.Why = why
	}
	return n, nil
}

func uncachedReason(t *graph.Task) string {
	if t.Persistent {
		return "persistent"
	}
	return "cache: false"
}

// edges answers the graph's edges, sorted, the critical path's marked.
func edges(ws *graph.Workspace, nodes []Node, path []string) []Edge {
	onPath := map[[2]string]bool{}
	for i := 1; i < len(path); i++ {
		onPath[[2]string{path[i], path[i-1]}] = true
	}
	var out []Edge
	for _, n := range nodes {
		for _, d := range n.DependsOn {
			kind := EdgeDependsOn
			if t, ok := ws.Task(d); ok && t.Project != n.Project {
				kind = EdgeUpstream
			}
			out = append(out, Edge{From: n.ID, To: d, Kind: kind, Critical: onPath[[2]string{n.ID, d}]})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].From != out[j].From {
			return out[i].From < out[j].From
		}
		return out[i].To < out[j].To
	})
	return nonNilEdges(out)
}

// projects answers the projects of the nodes with their tags, sorted.
func projects(ws *graph.Workspace, nodes []Node) []Project {
	seen := map[string]bool{}
	out := []Project{}
	for _, n := range nodes {
		if seen[n.Project] {
			continue
		}
		seen[n.Project] = true
		tags := []string{}
		if p, ok := ws.Project(n.Project); ok && p.Tags != nil {
			tags = nonNil(slices.Sorted(slices.Values(p.Tags)))
		}
		out = append(out, Project{Name: n.Project, Tags: tags})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilEdges(e []Edge) []Edge {
	if e == nil {
		return []Edge{}
	}
	return e
}
