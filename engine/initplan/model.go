package initplan

import (
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
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
	// PassThroughEnv names variables the task sees without them entering its key.
	PassThroughEnv []string
	// NoCache is true for a task that never hits the cache (cache: false).
	NoCache bool
	// Persistent is true for a dev server or a watcher (persistent: true).
	Persistent bool
	// NotInAll is true for a task `vx run --all` leaves out, such as a clean-up (all: false).
	NotInAll bool
	// Rewrites are the input files the command writes itself (rewrites), such as tshy's
	// package.json.
	Rewrites []string
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
	// scripts are the scripts of the package.json in the project folder, as vx reads them for
	// ifScript; nil without one.
	scripts map[string]string
	tasks   map[string]*taskSpec
	// sourceTasks names the tasks the source config declares (Nx targets), translated or not: a
	// dependency on one vx did not translate is an edge lost, which vx init must name.
	sourceTasks map[string]bool
}

// isRoot reports whether the project is the workspace folder itself, which vx gives no template.
func (p *project) isRoot() bool { return p.dir == "." }

func (p *project) hasScript(name string) bool {
	_, ok := p.scripts[name]
	return ok
}

// builder collects projects, todos and notes while a source config is translated.
type builder struct {
	repo     *repo
	mode     string
	sources  []string // files the workspace config was translated from
	globs    []string // the projects globs of vx.workspace.ts
	projects []*project
	// globalInputs are the workspace's globalInputs ("//…" globs).
	globalInputs []string
	// env, passThroughEnv and envMode are the workspace's (turbo's globalEnv, globalPassThroughEnv
	// and envMode).
	env, passThroughEnv []string
	envMode             string
	// fixed holds the templates the source config defines once for every package (turbo.json's
	// tasks): they are the workspace templates whatever the packages override.
	fixed map[string]*taskSpec
	// ifScript holds the template names that go only to projects with a script of that name.
	ifScript map[string]bool
	// nxGlobal holds the Nx inputs ("{workspaceRoot}/…") that became globalInputs.
	nxGlobal map[string]bool
	// nxNames holds the Nx projects' names, nxTargetNames every target name of the workspace
	// (sorted), for reading dependsOn as Nx reads it; nxPlugins is true when nx.json lists
	// plugins, which infer targets vx does not see.
	nxNames       map[string]bool
	nxTargetNames []string
	nxPlugins     bool
	// nxProjects are the Nx projects, for matching a dependsOn entry's projects patterns.
	nxProjects []*nxProject
	// plain holds the specs no project config shaped: a package script with the workspace's
	// defaults only (Nx targetDefaults). Among specs shared equally, a plain one is the template.
	plain map[*taskSpec]bool

	todos []*Todo
	notes []*noteEntry
	seen  map[string]bool // todos and notes already given
	// groups finds the todo or note that gathers one finding across projects or items.
	todoGroups map[string]*Todo
	noteGroups map[string]*noteEntry
}

// noteEntry is a note, or a note that lists items (grouped: one line, not one per item).
type noteEntry struct {
	text  string
	items []string
}

func newBuilder(r *repo, mode string) *builder {
	return &builder{repo: r, mode: mode, seen: map[string]bool{}, fixed: map[string]*taskSpec{},
		ifScript: map[string]bool{}, plain: map[*taskSpec]bool{}, todoGroups: map[string]*Todo{}, noteGroups: map[string]*noteEntry{}}
}

// todo records something that could not be translated, once.
func (b *builder) todo(file, key, format string, args ...any) {
	t := &Todo{File: file, Key: key, Message: fmt.Sprintf(format, args...)}
	id := t.File + "\x00" + t.Key + "\x00" + t.Message
	if !b.seen[id] {
		b.seen[id] = true
		b.todos = append(b.todos, t)
	}
}

// projectTodo records a todo of one project. The same key and message in several projects is one
// todo naming them all; its file is the first project's.
func (b *builder) projectTodo(p *project, file, key, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	id := key + "\x00" + msg
	if t, ok := b.todoGroups[id]; ok {
		if !containsString(t.Projects, p.name) {
			t.Projects = append(t.Projects, p.name)
		}
		return
	}
	t := &Todo{File: file, Key: key, Message: msg, Projects: []string{p.name}}
	b.todoGroups[id] = t
	b.todos = append(b.todos, t)
}

func (b *builder) note(format string, args ...any) {
	n := fmt.Sprintf(format, args...)
	if !b.seen[n] {
		b.seen[n] = true
		b.notes = append(b.notes, &noteEntry{text: n})
	}
}

// noteItem adds item to the note headed head: one note lists every item given under one head.
func (b *builder) noteItem(head, item string) {
	n, ok := b.noteGroups[head]
	if !ok {
		n = &noteEntry{text: head}
		b.noteGroups[head] = n
		b.notes = append(b.notes, n)
	}
	if !containsString(n.items, item) {
		n.items = append(n.items, item)
	}
}

// noteItemsShown bounds the items a note lists: past it the note names the first ones and counts
// the rest, so that a repository of hundreds of projects gets notes a person (or an agent) reads.
const noteItemsShown = 12

func (n *noteEntry) String() string {
	if len(n.items) == 0 {
		return n.text
	}
	if len(n.items) > noteItemsShown {
		return fmt.Sprintf("%s: %s; and %d more", n.text, strings.Join(n.items[:noteItemsShown], "; "), len(n.items)-noteItemsShown)
	}
	return n.text + ": " + strings.Join(n.items, "; ")
}

// packageProjects makes a project of every workspace package, named as vx names it (package.json
// name, else folder name), with no tasks yet.
func (b *builder) packageProjects() {
	for _, dir := range slices.Sorted(maps.Keys(b.repo.packages)) {
		pkg := b.repo.packages[dir]
		name := pkg.Name
		if name == "" {
			name = path.Base(dir)
		}
		if other := b.projectByName(name); other != nil {
			b.todo(path.Join(dir, "package.json"), "name", "%s is also the name of %s: vx needs each project's name to be unique — set name in one's vx.project.ts", name, other.dir)
		}
		b.projects = append(b.projects, &project{dir: dir, name: name, source: path.Join(dir, "package.json"),
			scripts: pkg.Scripts, tasks: map[string]*taskSpec{}})
	}
}

// rootName is the name vx gives the root project: its package.json name, else its folder's.
func (b *builder) rootName() string {
	if b.repo.rootPkg != nil && b.repo.rootPkg.Name != "" {
		return b.repo.rootPkg.Name
	}
	return filepath.Base(b.repo.root)
}

// rootProject returns the root project, making it (and adding '.' to projects) the first time.
func (b *builder) rootProject(source string) *project {
	for _, p := range b.projects {
		if p.isRoot() {
			return p
		}
	}
	p := &project{dir: ".", name: b.rootName(), source: source, tasks: map[string]*taskSpec{}}
	if b.repo.rootPkg != nil {
		p.scripts = b.repo.rootPkg.Scripts
	}
	if other := b.projectByName(p.name); other != nil {
		b.todo("package.json", "name", "%s is also the name of %s: vx needs each project's name to be unique — set name in one's vx.project.ts", p.name, other.dir)
	}
	b.projects = append(b.projects, p)
	if !containsString(b.globs, ".") {
		b.globs = append([]string{"."}, b.globs...)
	}
	return p
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
// the task in each dependency that has it. The fixed templates lose their references to a named
// project's missing task too.
func (b *builder) pruneDependsOn() {
	prune := func(owner *project, id string, deps []string) []string {
		var kept []string
		for _, d := range deps {
			switch {
			case strings.HasPrefix(d, "^"):
				if owner != nil {
					b.lostUpstream(owner, id, d[1:])
				}
				kept = append(kept, d)
			case strings.Contains(d, "#"):
				proj, task, _ := strings.Cut(d, "#")
				if q := b.projectByName(proj); q == nil || q.tasks[task] == nil {
					switch {
					case q == nil:
						b.noteItem("dependsOn dropped, no project has the name it gives", id+" → "+d)
					case !b.lostEdge(q, owner, id, d, task):
						b.noteItem("dependsOn dropped, the project named has no such task", id+" → "+d)
					}
					continue
				}
				kept = append(kept, d)
			case owner == nil:
				// A template's own task: kept when some package has it (each that lacks it
				// overrides), dropped when none does.
				if slices.ContainsFunc(b.projects, func(p *project) bool { return !p.isRoot() && p.tasks[d] != nil }) {
					kept = append(kept, d)
				}
			default:
				if owner.tasks[d] == nil {
					b.lostEdge(owner, owner, id, d, d)
					continue // as the source tool does: a task the project lacks is no dependency
				}
				if d == id[strings.LastIndexByte(id, '#')+1:] {
					continue
				}
				kept = append(kept, d)
			}
		}
		return kept
	}
	for _, p := range b.projects {
		for _, name := range slices.Sorted(maps.Keys(p.tasks)) {
			t := p.tasks[name]
			t.DependsOn = prune(p, p.name+"#"+name, t.DependsOn)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(b.fixed)) {
		t := b.fixed[name]
		t.DependsOn = prune(nil, name, t.DependsOn)
	}
}

// lostEdge records a todo when task, which q lacks, is a dependency the source tool has and vx
// cannot keep: a target of q's source config that vx did not translate, or, where nx.json lists
// plugins, one a plugin may infer. It reports whether it did; a task neither declares is no
// dependency for the source tool either.
func (b *builder) lostEdge(q, owner *project, id, ref, task string) bool {
	file, key := q.source, "dependsOn"
	if owner != nil {
		file = owner.source
		key = "targets." + id[strings.LastIndexByte(id, '#')+1:] + ".dependsOn"
	}
	switch {
	case q.sourceTasks[task]:
		b.todo(file, key, "%s depends on %s, a target vx did not translate (see its todo): until vx.project.ts declares it, vx runs %s without it", id, ref, id)
	case b.nxPlugins:
		b.todo(file, key, "%s depends on %s, which no config declares: if a plugin of nx.json infers it, declare it in vx.project.ts, or vx runs %s without it", id, ref, id)
	default:
		return false
	}
	return true
}

// lostUpstream records a todo for each project owner depends on whose task, which a ^task
// dependency reaches, is a target of its source config vx did not translate: vx passes through
// that project to its own dependencies, and the edge to it is lost.
func (b *builder) lostUpstream(owner *project, id, task string) {
	for _, q := range b.projectDeps(owner) {
		if q.tasks[task] == nil && q.sourceTasks[task] {
			key := "targets." + id[strings.LastIndexByte(id, '#')+1:] + ".dependsOn"
			b.todo(owner.source, key, "%s depends on %s#%s (through ^%s), a target vx did not translate (see its todo): until vx.project.ts declares it, vx runs %s without it", id, q.name, task, task, id)
		}
	}
}

// projectDeps lists the projects p depends on as vx reads them: its package.json dependencies
// that are projects of the workspace, and its own dependsOn.
func (b *builder) projectDeps(p *project) []*project {
	names := slices.Clone(p.dependsOn)
	if pkg := b.repo.packages[p.dir]; pkg != nil {
		for _, m := range []map[string]string{pkg.Dependencies, pkg.DevDependencies, pkg.PeerDependencies, pkg.OptionalDependencies} {
			names = addUnique(names, slices.Sorted(maps.Keys(m))...)
		}
	}
	var out []*project
	for _, name := range names {
		if q := b.projectByName(name); q != nil && q != p && !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	return out
}

// plan factors the projects' tasks into workspace templates and project overrides and renders them.
func (b *builder) plan() *Plan {
	sort.Slice(b.projects, func(i, j int) bool { return b.projects[i].dir < b.projects[j].dir })
	b.checkGlobs()
	b.rootConfigInputs()
	b.climbingFileInputs()
	b.selfWrittenInputs()
	templates := b.templates()
	b.tsconfigNotes()

	plan := &Plan{Mode: b.mode, PackageManager: b.repo.pm, Projects: []PlannedProject{}, Todos: []Todo{}, Notes: []string{}}
	plan.Files = append(plan.Files, File{Path: workspace.ConfigFileName, Text: b.renderWorkspace(templates)})
	for _, p := range b.projects {
		plan.Projects = append(plan.Projects, PlannedProject{Name: p.name, Dir: p.dir, Tasks: append([]string{}, slices.Sorted(maps.Keys(p.tasks))...)})
		if text, ok := b.renderProject(p, templates); ok {
			plan.Files = append(plan.Files, File{Path: path.Join(p.dir, workspace.ProjectConfigFileName), Text: text})
		}
	}
	for _, t := range b.todos {
		plan.Todos = append(plan.Todos, *t)
	}
	for _, n := range b.notes {
		plan.Notes = append(plan.Notes, n.String())
	}
	return plan
}

// templates picks, for each task name, the workspace template. A template the source config
// defines once for every package (turbo.json) is that one. Otherwise it is the spec that most
// packages share, when two or more share it exactly, or else the plain spec (a package script
// with the workspace's defaults, shaped by no project's config) when two or more projects have
// the task: a task that each project defines its own way stays in each project's config, never
// one project's made everyone's. The root project takes no template, so its tasks never count.
//
// A template goes only to the projects whose package.json has a script of its name (ifScript)
// when it comes from Turborepo, whose rule that is, or when every project that has the task has
// that script: then no project needs `false` to leave it out.
func (b *builder) templates() map[string]*taskSpec {
	byName := map[string][]*project{}
	for _, p := range b.projects {
		if p.isRoot() {
			continue
		}
		for name := range p.tasks {
			byName[name] = append(byName[name], p)
		}
	}
	out := map[string]*taskSpec{}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		holders := byName[name]
		if t, ok := b.fixed[name]; ok {
			out[name] = t
			b.ifScript[name] = t.Command != "" // a group reaches every project (turboGroups)
			continue
		}
		var best *taskSpec
		bestCount := 0
		for _, p := range holders {
			n := 0
			for _, o := range holders {
				if reflect.DeepEqual(p.tasks[name], o.tasks[name]) {
					n++
				}
			}
			if n > bestCount || n == bestCount && b.plain[p.tasks[name]] && !b.plain[best] {
				best, bestCount = p.tasks[name], n
			}
		}
		if bestCount < 2 && !(b.plain[best] && len(holders) >= 2) {
			continue
		}
		out[name] = best
		allScripts := true
		for _, p := range holders {
			allScripts = allScripts && p.hasScript(name)
		}
		b.ifScript[name] = allScripts
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// addUnique appends the items not yet in list.
func addUnique(list []string, items ...string) []string {
	for _, it := range items {
		if !containsString(list, it) {
			list = append(list, it)
		}
	}
	return list
}

// tshyRun matches a script that runs tshy, which writes its package's package.json on every
// build.
var tshyRun = regexp.MustCompile(`(^|[\s;&|(])(npx\s+|pnpm\s+(exec\s+)?|yarn\s+)?tshy(\s|$)`)

// selfWrittenInputs declares, on each task whose package script runs tshy, the package.json that
// tshy writes again as an input the task writes itself (rewrites): without it the build is never
// cached, for its input moved while it ran.
func (b *builder) selfWrittenInputs() {
	for _, p := range b.projects {
		for _, name := range slices.Sorted(maps.Keys(p.tasks)) {
			t := p.tasks[name]
			// A persistent task (tshy --watch) is never cached: nothing to declare.
			if t.Persistent || !runsTshy(p.scripts, name, 3) || slices.Contains(t.Rewrites, "package.json") {
				continue
			}
			c := *t // a template's spec may be shared: the project's own copy changes
			c.Rewrites = append(slices.Clone(t.Rewrites), "package.json")
			p.tasks[name] = &c
			b.noteItem("declared as written by its own build (tshy rewrites it, see rewrites in the config manual)", path.Join(p.dir, "package.json"))
		}
	}
}

// scriptCall matches a script's call of another script of its package (`npm run build:esm`,
// `pnpm run x`, `yarn x`, `bun run x`).
var scriptCall = regexp.MustCompile(`(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?([\w:.-]+)`)

// runsTshy reports whether the script name of scripts runs tshy, itself or through the scripts
// it calls, depth calls deep.
func runsTshy(scripts map[string]string, name string, depth int) bool {
	text, ok := scripts[name]
	if !ok || depth == 0 {
		return false
	}
	if tshyRun.MatchString(text) {
		return true
	}
	for _, m := range scriptCall.FindAllStringSubmatch(text, -1) {
		if m[1] != name && runsTshy(scripts, m[1], depth-1) {
			return true
		}
	}
	return false
}
