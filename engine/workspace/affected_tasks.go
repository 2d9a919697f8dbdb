package workspace

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/pathglob"
)

// affectedTaskSet answers every task of ws that the files changed since ref (see affectedSince
// for the base) affect, each with the reason, and the base it compared with.
func affectedTaskSet(ctx context.Context, ws *graph.Workspace, ref string) (map[string]string, string, error) {
	files, base, err := changedSinceBase(ctx, ws, ref)
	if err != nil {
		return nil, "", err
	}
	affected, err := affectedTasks(ws, files, base)
	return affected, base, err
}

// affectedTasks answers, by task id, why each task of ws is affected by the changed files
// (root-relative slash paths) since base: a changed file its own inputs match (the default
// inputs: any file of its project but its outputs; declared inputs: what they match, `//` globs
// and `^` dependency inputs included), a change of its project's package.json or vx.project.ts
// (its command may have moved), of the workspace config, the root package.json or a global
// input (every task), or a task it depends on being affected. A file in vx's state folders
// affects nothing.
func affectedTasks(ws *graph.Workspace, files []string, base string) (map[string]string, error) {
	global, err := pathglob.NewSet(".", ws.GlobalInputs)
	if err != nil {
		return nil, fmt.Errorf("globalInputs: %w", err)
	}
	matchers := map[string]*taskMatcher{}
	for _, id := range ws.TaskIDs() {
		t, _ := ws.Task(id)
		p, _ := ws.Project(t.Project)
		if matchers[id], err = newTaskMatcher(ws, p, t); err != nil {
			return nil, err
		}
	}
	direct := map[string]string{}
	state := stateFolders(ws)
	for _, f := range files {
		if inFolders(f, state) {
			continue
		}
		everything := f == ConfigFileName || f == "package.json" || global.Match(f)
		fileOwner := owner(ws, f)
		for _, id := range ws.TaskIDs() {
			if _, ok := direct[id]; ok {
				continue
			}
			if everything || matchers[id].matches(f, fileOwner) {
				direct[id] = fmt.Sprintf("%s changed since %s", f, base)
			}
		}
	}
	return withUpstream(ws, direct), nil
}

// withUpstream adds to the directly affected tasks every task that depends on one of them,
// transitively, each naming the task it depends on that is affected.
func withUpstream(ws *graph.Workspace, direct map[string]string) map[string]string {
	out := map[string]string{}
	// Closure orders every task after what it depends on.
	for _, id := range Closure(ws, ws.TaskIDs()) {
		if why, ok := direct[id]; ok {
			out[id] = why
			continue
		}
		t, _ := ws.Task(id)
		for _, d := range t.DependsOn {
			if _, ok := out[d]; ok {
				out[id] = fmt.Sprintf("depends on %s, which is affected", d)
				break
			}
		}
	}
	return out
}

// taskMatcher says whether a changed file is one of a task's inputs, by its path alone (a
// deleted file is matched as well as a present one).
type taskMatcher struct {
	p       *graph.Project
	outputs *pathglob.Set
	// own is nil for the default inputs (every file of the project).
	own *pathglob.Set
	// depProjects are the projects whose files the task's dependency inputs take, with the globs
	// they take there (depGlobs nil: every file).
	depProjects map[*graph.Project]bool
	depGlobs    map[*graph.Project]*pathglob.Set
}

// newTaskMatcher reads the globs of t, a task of p.
func newTaskMatcher(ws *graph.Workspace, p *graph.Project, t *graph.Task) (*taskMatcher, error) {
	m := &taskMatcher{p: p}
	var err error
	if m.outputs, err = pathglob.NewSet(p.Dir, t.Outputs); err != nil {
		return nil, fmt.Errorf("outputs of %s: %w", t.ID, err)
	}
	if own := t.OwnInputs(); own != nil {
		if m.own, err = pathglob.NewSet(p.Dir, own); err != nil {
			return nil, fmt.Errorf("inputs of %s: %w", t.ID, err)
		}
	}
	globs, any := t.DependencyInputs()
	if !any {
		return m, nil
	}
	m.depProjects, m.depGlobs = map[*graph.Project]bool{}, map[*graph.Project]*pathglob.Set{}
	for _, name := range projectClosure(ws, p.Name, false) {
		d, _ := ws.Project(name)
		m.depProjects[d] = true
		if globs != nil {
			if m.depGlobs[d], err = pathglob.NewSet(d.Dir, globs); err != nil {
				return nil, fmt.Errorf("inputs of %s: %w", t.ID, err)
			}
		}
	}
	return m, nil
}

// matches reports whether the changed file f (whose deepest project is fileOwner, nil for none)
// is an input of the task, or its project's manifest.
func (m *taskMatcher) matches(f string, fileOwner *graph.Project) bool {
	ownFile := fileOwner == m.p
	if ownFile && (f == path.Join(m.p.Dir, "package.json") || f == path.Join(m.p.Dir, ProjectConfigFileName)) {
		return true
	}
	if m.outputs.Match(f) {
		return false
	}
	if m.depProjects[fileOwner] {
		if set, ok := m.depGlobs[fileOwner]; !ok || set.Match(f) {
			return true
		}
	}
	if m.own == nil {
		return ownFile
	}
	if ownFile {
		return m.own.Match(f) || m.own.WithDefault() && !m.own.Excluded(f)
	}
	// A file outside the project's folder is an input when a root-relative (//) glob names it; one
	// inside it but in a nested project never is.
	return !inDir(f, m.p.Dir) && m.own.Match(f)
}

// inDir reports whether the root-relative slash path f lies in the folder dir ("." holds all).
func inDir(f, dir string) bool {
	return dir == "." || f == dir || strings.HasPrefix(f, dir+"/")
}
