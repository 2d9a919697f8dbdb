package workspace

import (
	"container/heap"
	"context"
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/vxerr"
)

// Select picks the projects and tasks a verb works on: the filters' projects (all when none),
// narrowed to the affected ones under --affected, then the named tasks (or all of them) in those
// projects, and everything those tasks depend on.
func Select(ctx context.Context, ws *graph.Workspace, opts SelectOptions) (*Selection, error) {
	projects := map[string]bool{}
	if len(opts.Filters) == 0 {
		for _, p := range ws.Projects {
			projects[p.Name] = true
		}
	}
	for _, f := range opts.Filters {
		names, err := filterProjects(ws, f)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			projects[n] = true
		}
	}
	sel := &Selection{Projects: []string{}, Requested: []string{}, TaskIDs: []string{}}
	if opts.Affected {
		affected, err := Affected(ctx, ws, opts.AffectedRef)
		if err != nil {
			return nil, err
		}
		sel.Affected = map[string]string{}
		for name := range projects {
			if why, ok := affected[name]; ok {
				sel.Affected[name] = why
			} else {
				delete(projects, name)
			}
		}
	}
	sel.Projects = sortedKeys(projects)

	requested := map[string]bool{}
	for _, name := range opts.Tasks {
		ids, err := matchTask(ws, projects, name, opts)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			requested[id] = true
		}
	}
	if opts.All {
		for _, pn := range sel.Projects {
			p, _ := ws.Project(pn)
			for _, tn := range p.TaskNames() {
				requested[graph.TaskID(pn, tn)] = true
			}
		}
	}
	sel.Requested = sortedKeys(requested)
	sel.TaskIDs = Closure(ws, sel.Requested)
	return sel, nil
}

// matchTask resolves one task argument: an id names that task; a name matches it in every
// selected project that has it.
func matchTask(ws *graph.Workspace, projects map[string]bool, arg string, opts SelectOptions) ([]string, error) {
	if strings.Contains(arg, "#") {
		if _, _, ok := graph.SplitTaskID(arg); !ok {
			return nil, vxerr.Usagef("task id %q is missing a half (write project#task)", arg)
		}
		if _, ok := ws.Task(arg); !ok {
			return nil, vxerr.Usagef("unknown task %q", arg)
		}
		return []string{arg}, nil
	}
	var ids []string
	exists := false
	for _, p := range ws.Projects {
		if p.Tasks[arg] == nil {
			continue
		}
		exists = true
		if projects[p.Name] {
			ids = append(ids, graph.TaskID(p.Name, arg))
		}
	}
	if !exists {
		return nil, vxerr.Usagef("unknown task %q: no project declares it", arg)
	}
	if len(ids) == 0 && len(opts.Filters) > 0 && !opts.Affected {
		return nil, vxerr.Usagef("no project selected by --filter %s has task %q", strings.Join(opts.Filters, " --filter "), arg)
	}
	return ids, nil
}

// filterProjects resolves one --filter value to project names.
func filterProjects(ws *graph.Workspace, f string) ([]string, error) {
	if strings.TrimSpace(f) == "" {
		return nil, vxerr.Usagef("--filter needs a value (a project name, a glob, tag:NAME, NAME... or ...NAME)")
	}
	withDeps, withDependents := false, false
	pat := f
	if strings.HasSuffix(pat, "...") {
		withDeps, pat = true, strings.TrimSuffix(pat, "...")
	}
	if strings.HasPrefix(pat, "...") {
		withDependents, pat = true, strings.TrimPrefix(pat, "...")
	}
	var base []string
	switch {
	case strings.HasPrefix(pat, "tag:"):
		tag := strings.TrimPrefix(pat, "tag:")
		for _, p := range ws.Projects {
			for _, t := range p.Tags {
				if t == tag {
					base = append(base, p.Name)
					break
				}
			}
		}
	default:
		if !doublestar.ValidatePattern(pat) || pat == "" {
			return nil, vxerr.Usagef("--filter %q is not a project name or glob", f)
		}
		for _, p := range ws.Projects {
			if ok, _ := doublestar.Match(pat, p.Name); ok {
				base = append(base, p.Name)
			}
		}
	}
	if len(base) == 0 {
		return nil, vxerr.Usagef("--filter %q matches no project", f)
	}
	out := map[string]bool{}
	for _, n := range base {
		out[n] = true
	}
	if withDeps {
		for _, n := range base {
			for _, d := range projectClosure(ws, n, false) {
				out[d] = true
			}
		}
	}
	if withDependents {
		for _, n := range base {
			for _, d := range projectClosure(ws, n, true) {
				out[d] = true
			}
		}
	}
	return sortedKeys(out), nil
}

// projectClosure lists the projects name depends on (or, reversed, that depend on it), transitively.
func projectClosure(ws *graph.Workspace, name string, dependents bool) []string {
	next := func(n string) []string {
		if !dependents {
			p, _ := ws.Project(n)
			return p.DependsOn
		}
		var out []string
		for _, p := range ws.Projects {
			for _, d := range p.DependsOn {
				if d == n {
					out = append(out, p.Name)
				}
			}
		}
		return out
	}
	seen := map[string]bool{name: true}
	queue := []string{name}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, d := range next(n) {
			if !seen[d] {
				seen[d] = true
				queue = append(queue, d)
			}
		}
	}
	delete(seen, name)
	return sortedKeys(seen)
}

// Closure returns ids and every task they transitively depend on, in dependency order: each task
// after everything it depends on, ties broken by id.
func Closure(ws *graph.Workspace, ids []string) []string {
	in := map[string]bool{}
	var add func(id string)
	add = func(id string) {
		if in[id] {
			return
		}
		in[id] = true
		t, _ := ws.Task(id)
		for _, d := range t.DependsOn {
			add(d)
		}
	}
	for _, id := range ids {
		add(id)
	}
	pending := map[string]int{}
	dependents := map[string][]string{}
	for id := range in {
		t, _ := ws.Task(id)
		pending[id] = len(t.DependsOn)
		for _, d := range t.DependsOn {
			dependents[d] = append(dependents[d], id)
		}
	}
	ready := &idHeap{}
	for id, n := range pending {
		if n == 0 {
			heap.Push(ready, id)
		}
	}
	out := make([]string, 0, len(in))
	for ready.Len() > 0 {
		id := heap.Pop(ready).(string)
		out = append(out, id)
		for _, d := range dependents[id] {
			pending[d]--
			if pending[d] == 0 {
				heap.Push(ready, d)
			}
		}
	}
	if len(out) != len(in) {
		panic(fmt.Sprintf("workspace: dependency cycle among %d tasks survived resolution", len(in)-len(out)))
	}
	return out
}

// idHeap is a min-heap of task ids, so ready tasks come out in id order.
type idHeap []string

func (h idHeap) Len() int           { return len(h) }
func (h idHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h idHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *idHeap) Push(x any)        { *h = append(*h, x.(string)) }
func (h *idHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
