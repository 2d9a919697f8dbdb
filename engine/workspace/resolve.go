package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/vxerr"
)

// resolveDeps turns every task's declared dependsOn into task ids: `^build` is build in each
// project this one depends on (where that project has it), `lint` is this project's lint, and
// `lib#build` is that task exactly. A reference to a task or project that does not exist is a
// config error at the line that declared it — unless missing says to keep the reference as an id
// (before the plugin stages, which may add the task) or to drop it (a partial load).
func resolveDeps(ws *graph.Workspace, missing missingRefs) error {
	lenient := missing != refuseMissing
	for _, id := range ws.TaskIDs() {
		t, _ := ws.Task(id)
		p, _ := ws.Project(t.Project)
		deps := map[string]bool{}
		through := map[string]bool{}
		for _, spec := range t.DependsOnSpec {
			bad := func(format string, args ...any) error {
				o := t.Origins.Get("dependsOn")
				return &vxerr.ConfigError{File: o.File, Line: o.Line, Col: o.Col, Msg: fmt.Sprintf("%s dependsOn %q: ", t.ID, spec) + fmt.Sprintf(format, args...)}
			}
			switch {
			case strings.HasPrefix(spec, "^"):
				upstream(ws, p, spec[1:], deps, through)
			case isNamePattern(spec):
				matchingTasks(ws, p, spec, deps)
			case strings.Contains(spec, "#"):
				proj, name, _ := graph.SplitTaskID(spec)
				dproj, ok := ws.Project(proj)
				exists := ok && dproj.Tasks[name] != nil
				switch {
				case !ok && !lenient:
					return bad("no project is named %q", proj)
				case !exists && !lenient:
					return bad("project %s has no task %q", proj, name)
				case exists || missing == keepMissing:
					deps[spec] = true
				}
			default:
				exists := p.Tasks[spec] != nil
				if !exists && t.IfScript && t.Origins.Get("dependsOn").File == ws.ConfigFile {
					// A template given only where the script exists waits on its sibling only
					// where that exists too, as Turborepo does.
					continue
				}
				if !exists && !lenient {
					return bad("project %s has no task %q", p.Name, spec)
				}
				if exists || missing == keepMissing {
					deps[graph.TaskID(p.Name, spec)] = true
				}
			}
		}
		delete(deps, t.ID)
		t.DependsOn = append([]string{}, slices.Sorted(maps.Keys(deps))...)
		t.Through = nil
		if len(through) > 0 {
			t.Through = append([]string{}, slices.Sorted(maps.Keys(through))...)
		}
		t.DependencyFiles = nil
		if _, ok := t.DependencyInputs(); ok {
			t.DependencyFiles = dependencyProjects(ws, p)
		}
		if t.Outputs == nil {
			t.Outputs = []string{}
		}
		if t.Env == nil {
			t.Env = []string{}
		}
		if t.ExecEnv == nil {
			t.ExecEnv = map[string]graph.EnvValue{}
		}
	}
	return nil
}

// upstream resolves `^name` for project p: name in each project p depends on; where one lacks
// the task, name in that one's own dependencies, and so on down (as Turborepo and Nx do), the
// projects passed through noted in through: their files enter the task's key, since what they
// hold (a shared tsconfig, sources bundled by a dependent) reaches the task with no task of
// their own to carry it.
func upstream(ws *graph.Workspace, p *graph.Project, name string, deps, through map[string]bool) {
	walkDependencies(ws, p, func(dp *graph.Project) bool {
		names := taskNamesMatching(dp, name)
		for _, n := range names {
			deps[graph.TaskID(dp.Name, n)] = true
		}
		if len(names) > 0 {
			return false
		}
		through[dp.Name] = true
		return true
	})
}

// isNamePattern reports whether a dependsOn name (`lint:*`, `lib#test:{unit,e2e}`, `^build:*`
// without its ^) is a glob over task names rather than one name.
func isNamePattern(spec string) bool {
	_, name, ok := graph.SplitTaskID(spec)
	if !ok {
		name = spec
	}
	return strings.ContainsAny(name, "*?[{")
}

// taskNamesMatching answers, sorted, the names of p's tasks that name matches: name itself, or
// every task name the glob matches when it is a pattern (none is fine).
func taskNamesMatching(p *graph.Project, name string) []string {
	if !isNamePattern(name) {
		if p.Tasks[name] != nil {
			return []string{name}
		}
		return nil
	}
	var out []string
	for _, n := range p.TaskNames() {
		if ok, _ := doublestar.Match(name, n); ok {
			out = append(out, n)
		}
	}
	return out
}

// matchingTasks adds to deps every task a dependsOn pattern matches: `lint:*` among p's own
// tasks, `lib#lint:*` among lib's. A pattern that matches nothing, or names a project that does
// not exist, adds nothing (as a `^` reference does).
func matchingTasks(ws *graph.Workspace, p *graph.Project, spec string, deps map[string]bool) {
	target, name := p, spec
	if proj, n, ok := graph.SplitTaskID(spec); ok {
		var found bool
		if target, found = ws.Project(proj); !found {
			return
		}
		name = n
	}
	for _, n := range taskNamesMatching(target, name) {
		deps[graph.TaskID(target.Name, n)] = true
	}
}

// dependencyProjects lists, sorted, every project p depends on, transitively: the projects whose
// files `^default` inputs take in.
func dependencyProjects(ws *graph.Workspace, p *graph.Project) []string {
	var out []string
	walkDependencies(ws, p, func(dp *graph.Project) bool {
		out = append(out, dp.Name)
		return true
	})
	slices.Sort(out)
	return out
}

// walkDependencies visits, breadth first and once each, the projects p depends on (a name that
// is no project is passed over), and goes on into a project's own dependencies where visit
// answers true.
func walkDependencies(ws *graph.Workspace, p *graph.Project, visit func(*graph.Project) bool) {
	seen := map[string]bool{p.Name: true}
	queue := append([]string(nil), p.DependsOn...)
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if seen[name] {
			continue
		}
		seen[name] = true
		if dp, ok := ws.Project(name); ok && visit(dp) {
			queue = append(queue, dp.DependsOn...)
		}
	}
}

// missingRefs says what resolveDeps does with a reference to a task that does not exist.
type missingRefs int

const (
	refuseMissing missingRefs = iota // a config error
	keepMissing                      // kept as an id, for a plugin stage to see and perhaps add
	dropMissing                      // left out, in a partial load
)

// findCycle reports a dependency cycle among tasks, naming every task on it.
func findCycle(ws *graph.Workspace) error {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var visit func(id string) error
	visit = func(id string) error {
		color[id] = grey
		stack = append(stack, id)
		t, _ := ws.Task(id)
		for _, d := range t.DependsOn {
			switch color[d] {
			case grey:
				i := indexOf(stack, d)
				cycle := append(append([]string{}, stack[i:]...), d)
				o := t.Origins.Get("dependsOn")
				return &vxerr.ConfigError{File: o.File, Line: o.Line, Col: o.Col, Msg: "dependency cycle: " + strings.Join(cycle, " → ")}
			case white:
				if err := visit(d); err != nil {
					return err
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[id] = black
		return nil
	}
	for _, id := range ws.TaskIDs() {
		if color[id] == white {
			if err := visit(id); err != nil {
				return err
			}
		}
	}
	return nil
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// runStages calls each plugin's stage, in plugin order, with the resolved task map; a stage that
// returns a map replaces the tasks with it. Fields a stage changed read as set by that plugin.
func (b *build) runStages(ctx context.Context, ws *graph.Workspace) error {
	for i, pl := range ws.Plugins {
		stage := b.sess.PluginStage(b.ws, i)
		if stage == nil {
			continue
		}
		before := map[string]map[string]any{}
		in := map[string]any{}
		for _, id := range ws.TaskIDs() {
			t, _ := ws.Task(id)
			m := taskMap(t)
			before[id] = m
			in[id] = m
		}
		out, err := b.sess.CallStage(ctx, stage, in)
		if err != nil {
			return fmt.Errorf("plugin %s stage: %w", pl.Name, err)
		}
		if out == nil {
			continue
		}
		if err := applyStage(ws, pl.Name, before, out); err != nil {
			return err
		}
		if err := resolveDeps(ws, keepMissing); err != nil {
			return err
		}
	}
	return nil
}

// taskMap is the plain form of a task a plugin stage receives.
func taskMap(t *graph.Task) map[string]any {
	m := map[string]any{
		"dependsOn": toAny(t.DependsOn),
		"outputs":   toAny(t.Outputs),
		"env":       toAny(t.Env),
		"cache":     t.Cache,
	}
	if !t.IsGroup() {
		m["command"] = t.Command
	}
	if t.Inputs != nil {
		m["inputs"] = toAny(t.Inputs)
	}
	if t.Rewrites != nil {
		m["rewrites"] = toAny(t.Rewrites)
	}
	if t.Description != "" {
		m["description"] = t.Description
	}
	if t.TimeoutSpec != "" {
		m["timeout"] = t.TimeoutSpec
	}
	if len(t.ExecEnv) > 0 {
		env := map[string]any{}
		for k, v := range t.ExecEnv {
			if v.Secret != "" {
				env[k] = map[string]any{"secret": v.Secret}
			} else {
				env[k] = v.Value
			}
		}
		m["exec"] = map[string]any{"env": env}
	}
	if t.Sandbox != nil {
		sb := map[string]any{"network": t.Sandbox.Network, "write": toAny(t.Sandbox.Write)}
		if t.Sandbox.Read != nil { // an absent read reads everywhere; `read: []` narrows
			sb["read"] = toAny(t.Sandbox.Read)
		}
		m["sandbox"] = sb
	}
	if t.Persistent {
		m["persistent"] = true
	}
	if t.Interruptible {
		m["interruptible"] = true
	}
	if !t.All {
		m["all"] = false
	}
	if t.Interactive {
		m["interactive"] = true
	}
	if rw := t.ReadyWhen; rw != nil {
		m["readyWhen"] = readyWhenMap(rw)
	}
	if t.RuntimeInputs != nil {
		m["runtimeInputs"] = toAny(t.RuntimeInputs)
	}
	return m
}

// readyWhenMap is the plain form of a readyWhen a plugin stage receives.
func readyWhenMap(rw *graph.ReadyWhen) map[string]any {
	m := map[string]any{}
	if rw.Log != "" {
		m["log"] = rw.Log
	}
	if rw.Port != 0 {
		m["port"] = int64(rw.Port)
	}
	if rw.TimeoutSpec != "" {
		m["timeout"] = rw.TimeoutSpec
	}
	return m
}

func toAny(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}

// applyStage replaces the workspace's tasks by the map a stage returned.
func applyStage(ws *graph.Workspace, plugin string, before map[string]map[string]any, out map[string]any) error {
	file := "plugin " + plugin
	r := reader{file: file}
	for _, p := range ws.Projects {
		p.Tasks = map[string]*graph.Task{}
	}
	ids := slices.Sorted(maps.Keys(out))
	for _, id := range ids {
		proj, name, ok := graph.SplitTaskID(id)
		if !ok {
			return &vxerr.ConfigError{File: file, Msg: fmt.Sprintf("stage returned task %q, which is not a project#task id", id)}
		}
		p, ok := ws.Project(proj)
		if !ok {
			return &vxerr.ConfigError{File: file, Msg: fmt.Sprintf("stage returned task %q of unknown project %q", id, proj)}
		}
		spec, err := r.taskSpec(id, out[id])
		if err != nil {
			return err
		}
		if !spec.declares("command") && !spec.declares("dependsOn") {
			return &vxerr.ConfigError{File: file, Msg: fmt.Sprintf("stage returned task %q with no command", id)}
		}
		old, _ := ws.Task(id)
		t := &graph.Task{ID: id, Project: proj, Name: name, Cache: true, All: true}
		if old != nil {
			t.Origins = old.Origins
		}
		spec.applyTo(t)
		prev := before[id]
		newMap, _ := out[id].(map[string]any)
		for field := range spec.set {
			if prev == nil || !sameJSON(prev[field], newMap[field]) {
				t.Origins.Set(field, graph.Origin{File: file})
			} else if old != nil {
				t.Origins.Set(field, old.Origins.Get(field))
			}
		}
		p.Tasks[name] = t
	}
	ws.Index()
	sort.Strings(ids)
	return nil
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
