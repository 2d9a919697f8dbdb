package initplan

import (
	"fmt"
	"path"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/vzn/vx/engine/workspace"
)

// taskSpec is one task of one project as vx config declares it.
type taskSpec struct {
	Description string
	Command     string
	DependsOn   []string
	// Inputs nil means vx's default: every file of the project that git does not ignore.
	Inputs  []string
	Outputs []string
	Env     []string
	ExecEnv map[string]string
	// NoCache is true for a task that never hits the cache (cache: false).
	NoCache bool
}

// project is one project of the planned config.
type project struct {
	// dir is the folder relative to the root ("apps/web", "." for the root).
	dir string
	// name is the project's vx name; setName is true when vx.project.ts must declare it because vx
	// would otherwise derive another one (from package.json or the folder).
	name    string
	setName bool
	// source names the file the project's tasks came from, for the generated header.
	source    string
	tags      []string
	dependsOn []string
	tasks     map[string]*taskSpec
}

// builder collects projects, todos and notes while a source config is translated.
type builder struct {
	repo     *repo
	mode     string
	sources  []string // files the workspace config was translated from
	globs    []string // the projects globs of vx.workspace.ts
	projects []*project
	todos    []Todo
	notes    []string
	seen     map[string]bool // todos and notes already given
	// template forces a workspace template for these task names (defined once in the source config).
	template map[string]bool
}

func newBuilder(r *repo, mode string) *builder {
	return &builder{repo: r, mode: mode, seen: map[string]bool{}, template: map[string]bool{}}
}

func (b *builder) todo(file, key, format string, args ...any) {
	t := Todo{File: file, Key: key, Message: fmt.Sprintf(format, args...)}
	id := t.File + "\x00" + t.Key + "\x00" + t.Message
	if !b.seen[id] {
		b.seen[id] = true
		b.todos = append(b.todos, t)
	}
}

func (b *builder) note(format string, args ...any) {
	n := fmt.Sprintf(format, args...)
	if !b.seen[n] {
		b.seen[n] = true
		b.notes = append(b.notes, n)
	}
}

// packageProjects makes a project of every workspace package, named as vx names it (package.json
// name, else folder name), with no tasks yet.
func (b *builder) packageProjects() {
	for _, dir := range sortedKeys(b.repo.packages) {
		pkg := b.repo.packages[dir]
		name := pkg.Name
		if name == "" {
			name = path.Base(dir)
		}
		if other := b.projectByName(name); other != nil {
			b.todo(path.Join(dir, "package.json"), "name", "%s is also the name of %s: vx needs each project's name to be unique — set name in one's vx.project.ts", name, other.dir)
		}
		b.projects = append(b.projects, &project{dir: dir, name: name, source: path.Join(dir, "package.json"), tasks: map[string]*taskSpec{}})
	}
}

// projectByName finds a project by its vx name.
func (b *builder) projectByName(name string) *project {
	for _, p := range b.projects {
		if p.name == name {
			return p
		}
	}
	return nil
}

// pruneDependsOn drops the task dependencies vx would refuse: a task of the same project, or of a
// named project, that does not exist (Turborepo and Nx skip those silently). ^task stays: it means
// the task in each dependency that has it.
func (b *builder) pruneDependsOn() {
	for _, p := range b.projects {
		for _, name := range sortedKeys(p.tasks) {
			t := p.tasks[name]
			kept := t.DependsOn[:0]
			for _, d := range t.DependsOn {
				switch {
				case strings.HasPrefix(d, "^"):
					kept = append(kept, d)
				case strings.Contains(d, "#"):
					proj, task, _ := strings.Cut(d, "#")
					if q := b.projectByName(proj); q == nil || q.tasks[task] == nil {
						b.note("%s: dependsOn %s dropped: that project has no such task", p.name+"#"+name, d)
						continue
					}
					kept = append(kept, d)
				default:
					if p.tasks[d] == nil || d == name {
						continue // as the source tool does: a task the project lacks is no dependency
					}
					kept = append(kept, d)
				}
			}
			if len(kept) == 0 {
				kept = nil
			}
			t.DependsOn = kept
		}
	}
}

// plan factors the projects' tasks into workspace templates and project overrides and renders them.
func (b *builder) plan() *Plan {
	sort.Slice(b.projects, func(i, j int) bool { return b.projects[i].dir < b.projects[j].dir })
	templates := b.templates()

	plan := &Plan{Mode: b.mode, PackageManager: b.repo.pm, Projects: []PlannedProject{}, Todos: b.todos, Notes: b.notes}
	if plan.Todos == nil {
		plan.Todos = []Todo{}
	}
	if plan.Notes == nil {
		plan.Notes = []string{}
	}
	plan.Files = append(plan.Files, File{Path: workspace.ConfigFileName, Text: b.renderWorkspace(templates)})
	for _, p := range b.projects {
		plan.Projects = append(plan.Projects, PlannedProject{Name: p.name, Dir: p.dir, Tasks: sortedKeys(p.tasks)})
		if text, ok := b.renderProject(p, templates); ok {
			plan.Files = append(plan.Files, File{Path: path.Join(p.dir, workspace.ProjectConfigFileName), Text: text})
		}
	}
	return plan
}

// templates picks, for each task name, the workspace template: the spec most projects share (the
// first project's among equals). A task name becomes a template when the source config defines it
// once for all (turbo.json, nx.json targetDefaults, shared scripts) or when two or more projects have
// it; a task of one project only is declared in that project's config.
func (b *builder) templates() map[string]*taskSpec {
	byName := map[string][]*taskSpec{}
	for _, p := range b.projects {
		for name, t := range p.tasks {
			byName[name] = append(byName[name], t)
		}
	}
	out := map[string]*taskSpec{}
	for _, name := range sortedKeys(byName) {
		specs := byName[name]
		if len(specs) < 2 && !b.template[name] {
			continue
		}
		best, bestCount := specs[0], 0
		for _, s := range specs {
			n := 0
			for _, o := range specs {
				if reflect.DeepEqual(s, o) {
					n++
				}
			}
			if n > bestCount {
				best, bestCount = s, n
			}
		}
		out[name] = best
	}
	return out
}

// renderWorkspace writes vx.workspace.ts.
func (b *builder) renderWorkspace(templates map[string]*taskSpec) string {
	var w tsWriter
	w.line("// vx config, written by `vx init` from %s. It is yours now: edit it freely.", strings.Join(b.sources, ", "))
	w.line("// The manual: `vx docs config`; see what it resolves to: `vx show`.")
	w.line("import { defineWorkspace } from '@vzn/vx/config'")
	w.line("import { mcp } from '@vzn/vx-mcp'")
	w.line("")
	w.line("export default defineWorkspace({")
	w.indent++
	w.line("projects: %s,", tsList(b.globs))
	w.line("plugins: [mcp()],")
	if len(templates) == 0 {
		w.line("tasks: {},")
	} else {
		w.line("tasks: {")
		w.indent++
		for _, name := range sortedKeys(templates) {
			w.task(name, templates[name], nil)
		}
		w.indent--
		w.line("},")
	}
	w.indent--
	w.line("})")
	return w.String()
}

// renderProject writes a project's vx.project.ts; ok is false when the project needs none.
func (b *builder) renderProject(p *project, templates map[string]*taskSpec) (string, bool) {
	var tasks tsWriter
	tasks.indent = 2
	names := map[string]bool{}
	for n := range p.tasks {
		names[n] = true
	}
	for n := range templates {
		names[n] = true
	}
	for _, name := range sortedKeys(names) {
		t, tmpl := p.tasks[name], templates[name]
		switch {
		case t == nil:
			tasks.line("%s: false,", tsKey(name))
		case tmpl == nil:
			tasks.task(name, t, nil)
		case !reflect.DeepEqual(t, tmpl):
			tasks.task(name, t, tmpl)
		}
	}
	if !p.setName && len(p.tags) == 0 && len(p.dependsOn) == 0 && tasks.Len() == 0 {
		return "", false
	}
	var w tsWriter
	w.line("// vx project config, written by `vx init` from %s.", p.source)
	w.line("// Tasks here override the workspace's field by field; `false` leaves a workspace task out.")
	w.line("import { defineProject } from '@vzn/vx/config'")
	w.line("")
	w.line("export default defineProject({")
	w.indent++
	if p.setName {
		w.line("name: %s,", tsString(p.name))
	}
	if len(p.tags) > 0 {
		w.line("tags: %s,", tsList(p.tags))
	}
	if len(p.dependsOn) > 0 {
		w.line("dependsOn: %s,", tsList(p.dependsOn))
	}
	if tasks.Len() == 0 {
		w.line("tasks: {},")
	} else {
		w.line("tasks: {")
		w.WriteString(tasks.String())
		w.line("},")
	}
	w.indent--
	w.line("})")
	return w.String(), true
}

// tsWriter builds TypeScript source with two-space indentation.
type tsWriter struct {
	strings.Builder
	indent int
}

func (w *tsWriter) line(format string, args ...any) {
	if format == "" {
		w.WriteByte('\n')
		return
	}
	w.WriteString(strings.Repeat("  ", w.indent))
	fmt.Fprintf(w, format, args...)
	w.WriteByte('\n')
}

// task writes one task entry; with base, only the fields that differ from it.
func (w *tsWriter) task(name string, t, base *taskSpec) {
	if base == nil {
		base = &taskSpec{}
	}
	var fields []string
	if t.Description != base.Description {
		fields = append(fields, "description: "+tsString(t.Description))
	}
	if t.Command != base.Command {
		fields = append(fields, "command: "+tsString(t.Command))
	}
	if !slices.Equal(t.DependsOn, base.DependsOn) {
		fields = append(fields, "dependsOn: "+tsList(t.DependsOn))
	}
	if !slices.Equal(t.Inputs, base.Inputs) || (t.Inputs == nil) != (base.Inputs == nil) {
		inputs := t.Inputs
		if inputs == nil {
			inputs = []string{"**"} // every file: the nearest an override gets to the default
		}
		fields = append(fields, "inputs: "+tsList(inputs))
	}
	if !slices.Equal(t.Outputs, base.Outputs) {
		fields = append(fields, "outputs: "+tsList(t.Outputs))
	}
	if !slices.Equal(t.Env, base.Env) {
		fields = append(fields, "env: "+tsList(t.Env))
	}
	if !reflect.DeepEqual(t.ExecEnv, base.ExecEnv) && len(t.ExecEnv) > 0 {
		var kv []string
		for _, k := range sortedKeys(t.ExecEnv) {
			kv = append(kv, tsKey(k)+": "+tsString(t.ExecEnv[k]))
		}
		fields = append(fields, "exec: { env: { "+strings.Join(kv, ", ")+" } }")
	}
	if t.NoCache != base.NoCache {
		fields = append(fields, fmt.Sprintf("cache: %t", !t.NoCache))
	}
	oneLine := tsKey(name) + ": { " + strings.Join(fields, ", ") + " },"
	if len(fields) <= 2 && len(oneLine)+2*w.indent <= 100 {
		w.line("%s", oneLine)
		return
	}
	w.line("%s: {", tsKey(name))
	w.indent++
	for _, f := range fields {
		w.line("%s,", f)
	}
	w.indent--
	w.line("},")
}

// tsString quotes s as a single-quoted TypeScript string.
func tsString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(`\'`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('\'')
	return b.String()
}

func tsList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = tsString(s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// tsKey writes an object key: bare when it is an identifier, else quoted.
func tsKey(k string) string {
	if k == "" {
		return "''"
	}
	for i, r := range k {
		if !(r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return tsString(k)
		}
	}
	return k
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// addUnique appends the items not yet in list.
func addUnique(list []string, items ...string) []string {
	for _, it := range items {
		if !slices.Contains(list, it) {
			list = append(list, it)
		}
	}
	return list
}
