package initplan

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/vzn/vx/engine/pathglob"
)

// turboJSON is a turbo.json: Turborepo 2 (tasks) or 1 (pipeline).
type turboJSON struct {
	Extends              []string                   `json:"extends"`
	Tasks                map[string]json.RawMessage `json:"tasks"`
	Pipeline             map[string]json.RawMessage `json:"pipeline"`
	GlobalEnv            []string                   `json:"globalEnv"`
	GlobalPassThroughEnv []string                   `json:"globalPassThroughEnv"`
	EnvMode              string                     `json:"envMode"`
	GlobalDependencies   []string                   `json:"globalDependencies"`
}

// turboTask is one task of turbo.json. Pointers tell an absent field from an empty one, which matters
// when a package's turbo.json overrides the root's field by field.
type turboTask struct {
	DependsOn      *[]string `json:"dependsOn"`
	Inputs         *[]string `json:"inputs"`
	Outputs        *[]string `json:"outputs"`
	Env            *[]string `json:"env"`
	PassThroughEnv *[]string `json:"passThroughEnv"`
	Cache          *bool     `json:"cache"`
	Persistent     *bool     `json:"persistent"`
	Interactive    *bool     `json:"interactive"`
	With           *[]string `json:"with"`
	Description    *string   `json:"description"`
}

// has reports whether the task sets the field (by its turbo.json name).
func (t turboTask) has(field string) bool {
	switch field {
	case "dependsOn":
		return t.DependsOn != nil
	case "inputs":
		return t.Inputs != nil
	case "outputs":
		return t.Outputs != nil
	case "env":
		return t.Env != nil
	case "passThroughEnv":
		return t.PassThroughEnv != nil
	case "persistent":
		return t.Persistent != nil
	case "interactive":
		return t.Interactive != nil
	case "with":
		return t.With != nil
	}
	return false
}

// turboKnown lists the task keys vx init reads or knowingly ignores (they only shape turbo's own
// terminal output or scheduling).
var turboKnown = map[string]bool{
	"dependsOn": true, "inputs": true, "outputs": true, "env": true, "passThroughEnv": true, "cache": true,
	"persistent": true, "interactive": true, "with": true, "description": true,
	"outputLogs": true, "outputMode": true, "interruptible": true,
}

// merge lays o's fields over t's: a package turbo.json overrides the root's field by field.
func (t turboTask) merge(o turboTask) turboTask {
	if o.DependsOn != nil {
		t.DependsOn = o.DependsOn
	}
	if o.Inputs != nil {
		t.Inputs = o.Inputs
	}
	if o.Outputs != nil {
		t.Outputs = o.Outputs
	}
	if o.Env != nil {
		t.Env = o.Env
	}
	if o.PassThroughEnv != nil {
		t.PassThroughEnv = o.PassThroughEnv
	}
	if o.Cache != nil {
		t.Cache = o.Cache
	}
	if o.Persistent != nil {
		t.Persistent = o.Persistent
	}
	if o.Interactive != nil {
		t.Interactive = o.Interactive
	}
	if o.With != nil {
		t.With = o.With
	}
	if o.Description != nil {
		t.Description = o.Description
	}
	return t
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// turboTasks reads the task map of a turbo.json, reporting unknown task keys as notes.
func (b *builder) turboTasks(file string, tj *turboJSON) (map[string]turboTask, error) {
	raw := tj.Tasks
	key := "tasks"
	if raw == nil && tj.Pipeline != nil {
		raw, key = tj.Pipeline, "pipeline"
		b.note("%s: the Turborepo 1 pipeline key was read as tasks", file)
	}
	out := map[string]turboTask{}
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		var t turboTask
		if err := json.Unmarshal(raw[name], &t); err != nil {
			return nil, fmt.Errorf("%s: %s.%s: %w", file, key, name, err)
		}
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(raw[name], &fields)
		for _, f := range slices.Sorted(maps.Keys(fields)) {
			if !turboKnown[f] {
				b.todo(file, key+"."+name+"."+f, "%s has no vx equivalent and was left out", f)
			}
		}
		out[name] = t
	}
	return out, nil
}

// turboRoot is how Turborepo names the workspace root in a glob.
const turboRoot = "$TURBO_ROOT$"

// fromTurbo translates the Turborepo config in file (named by the package.json script script, or
// found at the root). Each task of it becomes a workspace template that goes to every package with
// the script of that name (ifScript), run through the package manager; a package's own config
// (`pkg#task`, or its turbo.json) stays in that package's vx.project.ts; a root task (`//#task`)
// becomes a task of the root project.
func (b *builder) fromTurbo(file, script string) error {
	r := b.repo
	var tj turboJSON
	if _, err := readJSON(r.root, file, &tj); err != nil {
		return err
	}
	b.sources = append(b.sources, file)
	if script != "" {
		b.note("Turborepo's config is %s, as the package.json script %s names it (--root-turbo-json)", file, script)
	}
	b.workspaceProjects()
	b.noteWorkspace()

	tasks, err := b.turboTasks(file, &tj)
	if err != nil {
		return err
	}
	key := "tasks"
	if tj.Tasks == nil && tj.Pipeline != nil {
		key = "pipeline"
	}
	for _, g := range tj.GlobalDependencies {
		b.addGlobalInput(rootGlob(strings.TrimPrefix(strings.Replace(g, turboRoot, "", 1), "/")))
	}
	// globalEnv is the workspace's env (in every key, seen by every task), globalPassThroughEnv
	// its passThroughEnv; turbo's default mode is strict, as vx's is.
	globalEnv, globalWild := b.turboEnv(file, "globalEnv", tj.GlobalEnv)
	b.env = addUnique(b.env, globalEnv...)
	b.passThroughEnv = addUnique(b.passThroughEnv, append(globalWild, tj.GlobalPassThroughEnv...)...)
	if tj.EnvMode == "loose" {
		b.envMode = "loose"
	}

	// Generic tasks, package-specific ones ("web#build") that replace them for one package, and
	// root tasks ("//#lint").
	generic := map[string]turboTask{}
	specific := map[string]map[string]turboTask{} // package name -> task -> def
	for _, name := range slices.Sorted(maps.Keys(tasks)) {
		pkg, task, isSpecific := strings.Cut(name, "#")
		switch {
		case isSpecific && (pkg == "" || pkg == "//"):
			b.turboRootTask(file, key, name, task, tasks[name])
		case isSpecific:
			if specific[pkg] == nil {
				specific[pkg] = map[string]turboTask{}
			}
			specific[pkg][task] = tasks[name]
		default:
			generic[name] = tasks[name]
			where := func(field string) (string, string) { return file, key + "." + name + "." + field }
			b.fixed[name] = b.turboSpec(where, name, name, generic[name], "")
		}
	}
	for pkg := range specific {
		if b.projectByName(pkg) == nil {
			b.todo(file, key+"."+pkg+"#…", "no workspace package is named %s", pkg)
		}
	}

	if err := b.turboPackageTasks(file, key, generic, specific); err != nil {
		return err
	}
	b.turboTemplates(file, generic)
	b.pruneDependsOn()
	return nil
}

// turboPackageTasks gives each package the tasks it has a script for: the generic definition,
// or the package-specific one, merged field by field with the package's own turbo.json.
func (b *builder) turboPackageTasks(file, key string, generic map[string]turboTask, specific map[string]map[string]turboTask) error {
	r := b.repo
	groups := b.turboGroups(generic)
	for _, p := range b.projects {
		pkg := r.packages[p.dir]
		if pkg == nil {
			continue // the root project of root tasks; in a single-package repository the root is the package
		}
		defs := map[string]turboTask{}
		overrides := map[string]turboTask{}
		for n, t := range generic {
			defs[n] = t
		}
		for n, t := range specific[p.name] {
			defs[n] = t
		}
		// A package's own turbo.json ("extends": ["//"]) overrides the root's tasks field by field.
		pkgFile := ""
		for _, f := range []string{"turbo.json", "turbo.jsonc"} {
			var ptj turboJSON
			if ok, err := readJSON(r.root, path.Join(p.dir, f), &ptj); err != nil {
				return err
			} else if !ok {
				continue
			}
			pkgFile = path.Join(p.dir, f)
			ptasks, err := b.turboTasks(pkgFile, &ptj)
			if err != nil {
				return err
			}
			for n, t := range ptasks {
				defs[n], overrides[n] = defs[n].merge(t), t
			}
			break
		}
		for _, name := range slices.Sorted(maps.Keys(defs)) {
			script, ok := pkg.Scripts[name]
			if !ok {
				if groups[name] {
					// A group: every package runs its dependencies, those it has (pruneDependsOn).
					g := *b.fixed[name]
					g.DependsOn = slices.Clone(g.DependsOn)
					p.tasks[name] = &g
				}
				continue // Turborepo runs a task only where the package has the script
			}
			// where says which file and key declared a field of this task, for todos.
			where := func(field string) (string, string) {
				if o, ok := overrides[name]; ok && o.has(field) {
					return pkgFile, "tasks." + name + "." + field
				}
				if _, ok := specific[p.name][name]; ok {
					return file, key + "." + p.name + "#" + name + "." + field
				}
				return file, key + "." + name + "." + field
			}
			p.tasks[name] = b.turboSpec(where, p.name+"#"+name, name, defs[name], script)
		}
	}
	return nil
}

// turboGroups makes the generic tasks that only gather others into groups, and names them: a task
// with dependsOn that no package has a script for, nor overrides, is one Turborepo still puts in
// every package's graph, running nothing itself (`"ci": {"dependsOn": ["lint", "test"]}`). A vx
// group does the same: no command, never cached, no outputs.
func (b *builder) turboGroups(generic map[string]turboTask) map[string]bool {
	groups := map[string]bool{}
	for name, def := range generic {
		if len(deref(def.DependsOn)) == 0 || def.Persistent != nil && *def.Persistent || b.fixed[name] == nil {
			continue
		}
		scripted := false
		for _, pkg := range b.repo.packages {
			_, has := pkg.Scripts[name]
			scripted = scripted || has
		}
		if scripted {
			continue
		}
		t := b.fixed[name]
		t.Command, t.Outputs, t.NoCache = "", nil, false
		groups[name] = true
	}
	return groups
}

// turboTemplates marks a generic task persistent, not in --all or not cached where every package's
// script is so, so that the template says it once.
func (b *builder) turboTemplates(file string, generic map[string]turboTask) {
	r := b.repo
	for _, name := range slices.Sorted(maps.Keys(generic)) {
		var holders []*taskSpec
		for _, p := range b.projects {
			if t := p.tasks[name]; t != nil && r.packages[p.dir] != nil {
				holders = append(holders, t)
			}
		}
		if len(holders) == 0 {
			b.noteItem(fmt.Sprintf("%s tasks no package has a script for, so no project has them", file), name)
			continue
		}
		// What every package's script is (a server, a clean-up) the template says once.
		t := b.fixed[name]
		if allSpecs(holders, func(s *taskSpec) bool { return s.Persistent }) {
			t.Persistent = true
		}
		if allSpecs(holders, func(s *taskSpec) bool { return s.NotInAll }) {
			t.NotInAll = true
		}
		if allSpecs(holders, func(s *taskSpec) bool { return s.NoCache }) {
			t.NoCache = true
		}
	}
}

func allSpecs(specs []*taskSpec, ok func(*taskSpec) bool) bool {
	for _, s := range specs {
		if !ok(s) {
			return false
		}
	}
	return len(specs) > 0
}

// turboRootTask makes a root task ("//#lint") a task of the root project: Turborepo runs it with
// the root package.json's script of that name.
func (b *builder) turboRootTask(file, key, id, name string, def turboTask) {
	var scripts map[string]string
	if b.repo.rootPkg != nil {
		scripts = b.repo.rootPkg.Scripts
	}
	script, ok := scripts[name]
	if !ok {
		b.noteItem(fmt.Sprintf("%s root tasks left out: the root package.json has no script of their name", file), id)
		return
	}
	if runsTool(script, "turbo") {
		b.todo(file, key+"."+id, "the root script %s runs turbo itself: give the root task a script that does the work", name)
		return
	}
	where := func(field string) (string, string) { return file, key + "." + id + "." + field }
	rp := b.rootProject(file)
	rp.tasks[name] = b.turboSpec(where, rp.name+"#"+name, name, def, script)
}

// turboSpec translates one turbo task definition; where names the file and key of a field, id the
// task for notes. script is the package's script of the task's name; "" for a template.
func (b *builder) turboSpec(where func(field string) (file, key string), id, name string, def turboTask, script string) *taskSpec {
	t := &taskSpec{Command: b.repo.run(name), Description: deref(def.Description), NoCache: def.Cache != nil && !*def.Cache}
	var env []string
	for _, d := range deref(def.DependsOn) {
		if v, ok := strings.CutPrefix(d, "$"); ok {
			env = addUnique(env, v) // Turborepo 1's env dependency
			continue
		}
		if task, ok := strings.CutPrefix(d, "//#"); ok {
			d = b.rootName() + "#" + task
		}
		t.DependsOn = addUnique(t.DependsOn, d)
	}
	if def.Inputs != nil && len(*def.Inputs) > 0 {
		// $TURBO_DEFAULT$ is vx's '$default': the project's files, extended or narrowed by the rest.
		for _, in := range *def.Inputs {
			neg := strings.HasPrefix(in, "!")
			atRoot := strings.Contains(in, turboRoot)
			if atRoot {
				in = rootGlob(strings.Replace(strings.TrimPrefix(in, "!"), turboRoot, "", 1))
				if neg {
					in = "!" + in
				}
			}
			if in == "$TURBO_DEFAULT$" {
				in = pathglob.Default
			}
			t.Inputs = append(t.Inputs, in)
		}
	}
	if def.Outputs != nil && len(*def.Outputs) > 0 {
		for _, o := range *def.Outputs {
			if strings.Contains(o, turboRoot) {
				neg := strings.HasPrefix(o, "!")
				o = rootGlob(strings.Replace(strings.TrimPrefix(o, "!"), turboRoot, "", 1))
				if neg {
					o = "!" + o
				}
			}
			t.Outputs = append(t.Outputs, o)
		}
	}
	envFile, envKey := where("env")
	names, wild := b.turboEnv(envFile, envKey, deref(def.Env))
	env = addUnique(env, names...)
	if len(env) > 0 {
		sort.Strings(env)
		t.Env = env
	}
	if def.PassThroughEnv != nil {
		wild = append(wild, *def.PassThroughEnv...)
	}
	if len(wild) > 0 {
		t.PassThroughEnv = wild
	}
	if def.With != nil {
		file, at := where("with")
		b.todo(file, at, "vx does not start sidecar tasks; run %s alongside yourself", strings.Join(*def.With, ", "))
	}
	if deref(def.Interactive) {
		file, at := where("interactive")
		b.todo(file, at, "an interactive task: vx gives a task no terminal input — run `%s` directly when it asks for some", b.repo.run(name))
	}
	t.Persistent = deref(def.Persistent)
	// An explicit persistent: false is the author's word (create-t3-turbo's dev runs tsc under
	// turbo watch); only a task that says nothing is judged by its name and script.
	if def.Persistent == nil && script != "" && isLongRunning(name, script) {
		t.Persistent = true
		b.noteItem(notePersistent, byName(id, name, isLongRunning(name, "")))
	}
	if script != "" && isCleanup(name, script) {
		t.NotInAll = true
		if !t.NoCache {
			t.NoCache = true
			b.noteItem(noteCleanupNoCache, byName(id, name, isCleanup(name, "")))
		} else {
			b.noteItem(noteCleanup, byName(id, name, isCleanup(name, "")))
		}
	}
	return t
}

// Notes that list the tasks a rule of vx init changed.
const (
	notePersistent     = "persistent: true for scripts that serve or watch (by name, or by a command such as --watch, next dev, vite, nodemon)"
	noteCleanup        = "all: false for clean-up scripts (vx run --all leaves them out)"
	noteCleanupNoCache = "all: false and cache: false for clean-up scripts (vx run --all leaves them out; a clean-up must run each time)"
)

// byName names a task in a note: by its name alone when the rule went by the name, so that one
// item stands for every project; else by its id.
func byName(id, name string, nameRule bool) string {
	if nameRule {
		return name
	}
	return id
}

// turboEnv splits a turbo env list: the plain variable names (vx's env) and the wildcards and
// exclusions, which vx's env cannot hold. Those go to passThroughEnv, so that the task still sees
// the variables they match (vx, as turbo, gives a task only what it declares), and are todos: their
// values are in no key until each variable is named in env.
func (b *builder) turboEnv(file, key string, names []string) (plain, wild []string) {
	for _, n := range names {
		if strings.ContainsAny(n, "*!") {
			b.todo(file, key, "%q: vx env lists exact variable names; name each variable it stands for (it is in passThroughEnv meanwhile: the task sees them, their values are in no key)", n)
			wild = addUnique(wild, n)
			continue
		}
		plain = addUnique(plain, n)
	}
	return plain, wild
}

// projectDirs lists the folders of the projects found.
func (b *builder) projectDirs() []string {
	dirs := make([]string, 0, len(b.projects))
	for _, p := range b.projects {
		dirs = append(dirs, p.dir)
	}
	sort.Strings(dirs)
	return dirs
}

// noteWorkspace says where the projects and the package manager came from.
func (b *builder) noteWorkspace() {
	r := b.repo
	if r.globsFile != "" {
		b.note("projects from %s workspaces: %s", r.globsFile, strings.Join(r.globs, ", "))
		if r.globsFile != "package.json" || b.mode != ModeScripts {
			b.sources = append(b.sources, r.globsFile)
		}
	}
	switch r.pmSource {
	case "default":
		b.note("no lockfile: scripts run with npm (run `vx init` again after the first install to pick another manager); without one no key holds the versions of external packages, so an install that resolves newer ones moves none")
	default:
		b.note("scripts run with %s (from %s)", r.pm, r.pmSource)
	}
}
