package initplan

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
)

// turboJSON is a turbo.json: Turborepo 2 (tasks) or 1 (pipeline).
type turboJSON struct {
	Extends              []string                   `json:"extends"`
	Tasks                map[string]json.RawMessage `json:"tasks"`
	Pipeline             map[string]json.RawMessage `json:"pipeline"`
	GlobalEnv            []string                   `json:"globalEnv"`
	GlobalPassThroughEnv []string                   `json:"globalPassThroughEnv"`
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
	for _, name := range sortedKeys(raw) {
		var t turboTask
		if err := json.Unmarshal(raw[name], &t); err != nil {
			return nil, fmt.Errorf("%s: %s.%s: %w", file, key, name, err)
		}
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(raw[name], &fields)
		for _, f := range sortedKeys(fields) {
			if !turboKnown[f] {
				b.todo(file, key+"."+name+"."+f, "%s has no vx equivalent and was left out", f)
			}
		}
		out[name] = t
	}
	return out, nil
}

// fromTurbo translates turbo.json: each task becomes a vx task in every package that has the script
// of that name, run through the package manager.
func (b *builder) fromTurbo() error {
	r := b.repo
	var tj turboJSON
	if _, err := readJSON(r.root, "turbo.json", &tj); err != nil {
		return err
	}
	b.sources = append(b.sources, "turbo.json")
	b.workspaceProjects()
	b.noteWorkspace()

	tasks, err := b.turboTasks("turbo.json", &tj)
	if err != nil {
		return err
	}
	key := "tasks"
	if tj.Tasks == nil && tj.Pipeline != nil {
		key = "pipeline"
	}
	for _, g := range tj.GlobalDependencies {
		b.todo("turbo.json", "globalDependencies", "%q: vx inputs are globs inside each project; a file outside them does not enter the cache key — move or list it where a task reads it", g)
	}
	globalEnv := b.turboEnv("turbo.json", "globalEnv", tj.GlobalEnv)
	if len(tj.GlobalPassThroughEnv) > 0 {
		b.note("turbo.json globalPassThroughEnv (%s): vx passes its environment to every task, so nothing needed translating", strings.Join(tj.GlobalPassThroughEnv, ", "))
	}

	// Generic tasks, and package-specific ones ("web#build") that replace them for one package.
	generic := map[string]turboTask{}
	specific := map[string]map[string]turboTask{} // package name -> task -> def
	for _, name := range sortedKeys(tasks) {
		pkg, task, isSpecific := strings.Cut(name, "#")
		switch {
		case isSpecific && (pkg == "" || pkg == "//"):
			b.todo("turbo.json", key+"."+name, "a root task: vx runs tasks in projects; make the root a project ('.' in projects) or run it outside vx")
		case isSpecific:
			if specific[pkg] == nil {
				specific[pkg] = map[string]turboTask{}
			}
			specific[pkg][task] = tasks[name]
		default:
			generic[name] = tasks[name]
			b.template[name] = true
		}
	}
	for pkg := range specific {
		if b.projectByName(pkg) == nil {
			b.todo("turbo.json", key+"."+pkg+"#…", "no workspace package is named %s", pkg)
		}
	}

	persistentSeen := map[string]bool{}
	for _, p := range b.projects {
		pkg := r.packages[p.dir]
		defs := map[string]turboTask{}
		overrides := map[string]turboTask{}
		for n, t := range generic {
			defs[n] = t
		}
		for n, t := range specific[p.name] {
			defs[n] = t
		}
		// A package's own turbo.json ("extends": ["//"]) overrides the root's tasks field by field.
		pkgFile := path.Join(p.dir, "turbo.json")
		var ptj turboJSON
		if ok, err := readJSON(r.root, pkgFile, &ptj); err != nil {
			return err
		} else if ok {
			ptasks, err := b.turboTasks(pkgFile, &ptj)
			if err != nil {
				return err
			}
			for n, t := range ptasks {
				defs[n], overrides[n] = defs[n].merge(t), t
			}
		}
		for _, name := range sortedKeys(defs) {
			def := defs[name]
			if _, ok := pkg.Scripts[name]; !ok {
				continue // turbo runs a task only where the package has the script
			}
			// where says which file and key declared a field of this task, for todos.
			where := func(field string) (string, string) {
				if o, ok := overrides[name]; ok && o.has(field) {
					return pkgFile, "tasks." + name + "." + field
				}
				if _, ok := specific[p.name][name]; ok {
					return "turbo.json", key + "." + p.name + "#" + name + "." + field
				}
				return "turbo.json", key + "." + name + "." + field
			}
			if deref(def.Persistent) || deref(def.Interactive) {
				what := "persistent"
				if !deref(def.Persistent) {
					what = "interactive"
				}
				file, at := where(what)
				if !persistentSeen[file+at] {
					persistentSeen[file+at] = true
					b.todo(file, at, "a %s task (a dev server or watcher): vx has no long-running tasks yet — run `%s` directly", what, r.run(name))
				}
				continue
			}
			if def.With != nil {
				file, at := where("with")
				b.todo(file, at, "vx does not start sidecar tasks; run %s alongside yourself", strings.Join(*def.With, ", "))
			}
			p.tasks[name] = b.turboSpec(where, name, def, globalEnv)
		}
	}
	for _, name := range sortedKeys(generic) {
		if !slices.ContainsFunc(b.projects, func(p *project) bool { return p.tasks[name] != nil }) && !deref(generic[name].Persistent) {
			b.note("turbo.json %s.%s: no package has the script %s, so no project has the task", key, name, name)
		}
	}
	b.pruneDependsOn()
	return nil
}

// turboSpec translates one turbo task definition; where names the file and key of a field.
func (b *builder) turboSpec(where func(field string) (file, key string), name string, def turboTask, globalEnv []string) *taskSpec {
	t := &taskSpec{Command: b.repo.run(name), Description: deref(def.Description), NoCache: def.Cache != nil && !*def.Cache}
	env := append([]string{}, globalEnv...)
	for _, d := range deref(def.DependsOn) {
		if v, ok := strings.CutPrefix(d, "$"); ok {
			env = addUnique(env, v) // Turborepo 1's env dependency
			continue
		}
		if strings.HasPrefix(d, "//#") {
			file, at := where("dependsOn")
			b.todo(file, at, "%s is a root task, which vx does not run; the dependency was left out", d)
			continue
		}
		t.DependsOn = addUnique(t.DependsOn, d)
	}
	if def.Inputs != nil && len(*def.Inputs) > 0 {
		inputs := *def.Inputs
		file, at := where("inputs")
		withDefault := slices.Contains(inputs, "$TURBO_DEFAULT$")
		for _, in := range inputs {
			switch {
			case in == "$TURBO_DEFAULT$":
			case strings.Contains(in, "$TURBO_ROOT$"):
				b.todo(file, at, "%q is outside the project: vx inputs are globs inside the project folder", in)
			case withDefault:
				// vx's default cannot be extended, and '**' would take in outputs and node_modules.
				b.todo(file, at, "%q beside $TURBO_DEFAULT$ was left out: vx's default inputs (every file git does not ignore) cannot be extended — to key on it, list the task's inputs in full", in)
			default:
				t.Inputs = append(t.Inputs, in)
			}
		}
	}
	if def.Outputs != nil && len(*def.Outputs) > 0 {
		for _, o := range *def.Outputs {
			if strings.Contains(o, "$TURBO_ROOT$") {
				file, at := where("outputs")
				b.todo(file, at, "%q is outside the project: vx outputs are globs inside the project folder", o)
				continue
			}
			t.Outputs = append(t.Outputs, o)
		}
	}
	envFile, envKey := where("env")
	env = addUnique(env, b.turboEnv(envFile, envKey, deref(def.Env))...)
	if len(env) > 0 {
		sort.Strings(env)
		t.Env = env
	}
	if def.PassThroughEnv != nil && len(*def.PassThroughEnv) > 0 {
		file, at := where("passThroughEnv")
		b.note("%s %s (%s): vx passes its environment to every task, so nothing needed translating", file, at, strings.Join(*def.PassThroughEnv, ", "))
	}
	return t
}

// turboEnv keeps the plain variable names of a turbo env list; wildcards and exclusions are todos.
func (b *builder) turboEnv(file, key string, names []string) []string {
	var out []string
	for _, n := range names {
		if strings.ContainsAny(n, "*!") {
			b.todo(file, key, "%q: vx env lists exact variable names; name each variable it stands for", n)
			continue
		}
		out = addUnique(out, n)
	}
	return out
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
		b.note("no lockfile: scripts run with npm (run `vx init` again after the first install to pick another manager)")
	default:
		b.note("scripts run with %s (from %s)", r.pm, r.pmSource)
	}
}
