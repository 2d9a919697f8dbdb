package initplan

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/pathglob"
)

// nxJSON holds the fields of nx.json that vx init reads.
type nxJSON struct {
	TargetDefaults     map[string]nxTarget          `json:"targetDefaults"`
	NamedInputs        map[string][]json.RawMessage `json:"namedInputs"`
	TasksRunnerOptions map[string]struct {
		Options struct {
			CacheableOperations []string `json:"cacheableOperations"`
		} `json:"options"`
	} `json:"tasksRunnerOptions"`
	Plugins []json.RawMessage `json:"plugins"`
}

// nxTarget is one target of project.json (or a target default of nx.json).
type nxTarget struct {
	Executor             string                                `json:"executor"`
	Command              string                                `json:"command"`
	Options              map[string]json.RawMessage            `json:"options"`
	Configurations       map[string]map[string]json.RawMessage `json:"configurations"`
	DefaultConfiguration string                                `json:"defaultConfiguration"`
	DependsOn            []json.RawMessage                     `json:"dependsOn"`
	Inputs               []json.RawMessage                     `json:"inputs"`
	Outputs              []string                              `json:"outputs"`
	Cache                *bool                                 `json:"cache"`
	Continuous           *bool                                 `json:"continuous"`
}

// nxProjectConfig is a project.json, or the "nx" block of a package.json.
type nxProjectConfig struct {
	Name                 string                       `json:"name"`
	Tags                 []string                     `json:"tags"`
	ImplicitDependencies []string                     `json:"implicitDependencies"`
	NamedInputs          map[string][]json.RawMessage `json:"namedInputs"`
	Targets              map[string]nxTarget          `json:"targets"`
	IncludedScripts      *[]string                    `json:"includedScripts"`
}

// over lays t's fields over base's, as Nx lays a target over its target default: options merge key
// by key, every other field set in t replaces base's.
func (t nxTarget) over(base nxTarget) nxTarget {
	out := base
	if t.Executor != "" {
		out.Executor = t.Executor
	}
	if t.Command != "" {
		out.Command = t.Command
	}
	if base.Options != nil || t.Options != nil {
		out.Options = map[string]json.RawMessage{}
		maps.Copy(out.Options, base.Options)
		maps.Copy(out.Options, t.Options)
	}
	if t.Configurations != nil {
		out.Configurations = t.Configurations
	}
	if t.DefaultConfiguration != "" {
		out.DefaultConfiguration = t.DefaultConfiguration
	}
	if t.DependsOn != nil {
		out.DependsOn = t.DependsOn
	}
	if t.Inputs != nil {
		out.Inputs = t.Inputs
	}
	if t.Outputs != nil {
		out.Outputs = t.Outputs
	}
	if t.Cache != nil {
		out.Cache = t.Cache
	}
	if t.Continuous != nil {
		out.Continuous = t.Continuous
	}
	return out
}

// nxSkipDirs are never searched for project.json.
var nxSkipDirs = map[string]bool{"node_modules": true, "dist": true, "tmp": true, "coverage": true}

// nxProject is what one Nx project is made of before translation.
type nxProject struct {
	*project
	file        string // project.json, or package.json when the project has none
	config      nxProjectConfig
	scripts     map[string]string
	namedInputs map[string][]json.RawMessage
	// namedInputsFile says where each named input is defined.
	namedInputsFile map[string]string
	// targets are the project's targets before their target defaults are laid under them.
	targets map[string]nxTarget
}

// fromNx translates nx.json and every project.json (and package.json nx blocks): run-commands and
// run-script targets become commands; every other executor is a todo naming it.
func (b *builder) fromNx() error {
	r := b.repo
	var nx nxJSON
	if _, err := readJSON(r.root, "nx.json", &nx); err != nil {
		return err
	}
	b.sources = append(b.sources, "nx.json")

	dirs, projectJSONs, err := b.nxProjectDirs()
	if err != nil {
		return err
	}
	if r.rootPkg != nil && r.rootPkg.Nx != nil {
		dirs["."] = true // the root package.json with an nx block is the root project
	}
	if projectJSONs > 0 {
		b.sources = append(b.sources, "project.json files")
	}

	var projects []*nxProject
	for _, dir := range slices.Sorted(maps.Keys(dirs)) {
		np, err := b.readNxProject(dir, &nx)
		if err != nil {
			return err
		}
		projects = append(projects, np)
		b.projects = append(b.projects, np.project)
	}
	b.globs = dirGlobs(r.root, slices.Sorted(maps.Keys(dirs)))
	if r.globsFile != "" {
		b.globs = projectGlobs(r.root, append(slices.Clone(r.globs), b.globs...), slices.Sorted(maps.Keys(dirs)))
	}
	b.noteWorkspace()

	for i, pl := range nx.Plugins {
		var name string
		if json.Unmarshal(pl, &name) != nil {
			var obj struct {
				Plugin string `json:"plugin"`
			}
			_ = json.Unmarshal(pl, &obj)
			name = obj.Plugin
		}
		b.todo("nx.json", fmt.Sprintf("plugins[%d]", i), "targets the plugin %s infers (from its tool's config files) are not translated: declare the commands you need in vx.project.ts", name)
	}
	b.nxGlobalInputs(&nx)
	b.nxRootTsconfig()
	cacheable := map[string]bool{}
	for _, tro := range nx.TasksRunnerOptions {
		for _, op := range tro.Options.CacheableOperations {
			cacheable[op] = true
		}
	}

	b.nxIndex(projects, len(nx.Plugins) > 0)
	for _, np := range projects {
		b.nxTargets(np, &nx, cacheable)
	}
	b.note("Nx infers project dependencies from imports; vx reads package.json dependencies and dependsOn: declare dependsOn in vx.project.ts where a project imports another without a package.json dependency")
	b.pruneDependsOn()
	return nil
}

// nxProjectDirs finds the Nx project folders: those of every project.json and every workspace
// package, less what .nxignore ignores (as Nx's workspace walker leaves those files unread). A
// package it ignores is no project of the plan either.
func (b *builder) nxProjectDirs() (dirs map[string]bool, projectJSONs int, err error) {
	r := b.repo
	ignore, err := readIgnoreFile(r.root, ".nxignore")
	if err != nil {
		return nil, 0, err
	}
	dirs = map[string]bool{}
	err = filepath.WalkDir(r.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable folder holds no project we can read
		}
		name := d.Name()
		rel, _ := filepath.Rel(r.root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() && p != r.root && (nxSkipDirs[name] || strings.HasPrefix(name, ".") || ignore.ignored(rel, true)) {
			return filepath.SkipDir
		}
		if !d.IsDir() && name == "project.json" && !ignore.ignored(rel, false) {
			dirs[path.Dir(rel)] = true
			projectJSONs++
		}
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("look for project.json files: %w", err)
	}
	for _, dir := range slices.Sorted(maps.Keys(r.packages)) {
		if ignore.ignored(path.Join(dir, "package.json"), false) && !dirs[dir] {
			delete(r.packages, dir)
			b.noteItem("workspace packages .nxignore leaves out are no projects (as Nx reads them)", dir)
			continue
		}
		dirs[dir] = true
	}
	return dirs, projectJSONs, nil
}

// nxIndex gathers what resolving a dependsOn entry needs before any target is translated: the
// projects' Nx names, each project's targets and every target name of the workspace.
func (b *builder) nxIndex(projects []*nxProject, plugins bool) {
	b.nxNames = map[string]bool{}
	b.nxPlugins = plugins
	b.nxProjects = projects
	names := map[string]bool{}
	for _, np := range projects {
		b.nxNames[np.name] = true
		np.targets = b.nxTargetMap(np)
		np.sourceTasks = map[string]bool{}
		for name := range np.targets {
			np.sourceTasks[name] = true
			names[name] = true
		}
	}
	b.nxTargetNames = slices.Sorted(maps.Keys(names))
}

// readNxProject reads a project's project.json, package.json and its nx block.
func (b *builder) readNxProject(dir string, nx *nxJSON) (*nxProject, error) {
	r := b.repo
	np := &nxProject{project: &project{dir: dir, tasks: map[string]*taskSpec{}},
		namedInputs: map[string][]json.RawMessage{}, namedInputsFile: map[string]string{}}
	for name, in := range nx.NamedInputs {
		np.namedInputs[name], np.namedInputsFile[name] = in, "nx.json"
	}
	pkg := r.packages[dir]
	if dir == "." {
		pkg = r.rootPkg
	}
	if pkg == nil && dir != "." {
		var p packageJSON
		ok, err := readJSON(r.root, path.Join(dir, "package.json"), &p)
		if err != nil {
			return nil, err
		}
		if ok {
			pkg = &p
		}
	}
	np.file = path.Join(dir, "project.json")
	ok, err := readJSON(r.root, np.file, &np.config)
	if err != nil {
		return nil, err
	}
	if pkg != nil {
		np.scripts = pkg.Scripts
		np.project.scripts = pkg.Scripts
		if !ok {
			np.file = path.Join(dir, "package.json")
		}
		if pkg.Nx != nil {
			// project.json wins over the package.json nx block, field by field.
			pj := np.config
			np.config = *pkg.Nx
			if pj.Name != "" {
				np.config.Name = pj.Name
			}
			if pj.Tags != nil {
				np.config.Tags = pj.Tags
			}
			if pj.ImplicitDependencies != nil {
				np.config.ImplicitDependencies = pj.ImplicitDependencies
			}
			if pj.NamedInputs != nil {
				np.config.NamedInputs = pj.NamedInputs
			}
			targets := map[string]nxTarget{}
			maps.Copy(targets, pkg.Nx.Targets)
			for n, t := range pj.Targets {
				targets[n] = t.over(targets[n])
			}
			np.config.Targets = targets
		}
	}
	for name, in := range np.config.NamedInputs {
		np.namedInputs[name], np.namedInputsFile[name] = in, np.file
	}
	np.source = np.file

	// vx names a project from package.json, else from its folder; Nx from project.json first.
	derived := path.Base(dir)
	if dir == "." {
		derived = filepath.Base(r.root)
	}
	if pkg != nil && pkg.Name != "" {
		derived = pkg.Name
	}
	np.name = derived
	if np.config.Name != "" && np.config.Name != derived {
		np.name, np.setName = np.config.Name, true
	}
	np.tags = np.config.Tags
	for _, d := range np.config.ImplicitDependencies {
		if strings.HasPrefix(d, "!") || strings.Contains(d, "*") {
			b.projectTodo(np.project, np.file, "implicitDependencies", "%q: vx dependsOn names projects; list them by name", d)
			continue
		}
		np.dependsOn = append(np.dependsOn, d)
	}
	return np, nil
}

// nxTargetMap lists the targets Nx gives a project from its configuration: its package.json
// scripts (nx:run-script) with its project.json and nx block targets laid over them.
func (b *builder) nxTargetMap(np *nxProject) map[string]nxTarget {
	targets := map[string]nxTarget{}
	included := np.config.IncludedScripts
	for name, cmd := range np.scripts {
		if included != nil && !slices.Contains(*included, name) {
			continue
		}
		if lifecycleScripts[name] || isHook(name, np.scripts) {
			continue
		}
		if np.isRoot() && included == nil && runsTool(cmd, "nx", "turbo", "lerna") {
			// `"build": "nx run-many -t build"`: how the repository ran Nx, which vx replaces.
			b.noteItem("root scripts that run nx itself are no tasks of the root project (vx runs the projects' tasks)", name)
			continue
		}
		opts, _ := json.Marshal(name)
		targets[name] = nxTarget{Executor: "nx:run-script", Options: map[string]json.RawMessage{"script": opts}}
	}
	for name, t := range np.config.Targets {
		targets[name] = t.over(targets[name])
	}
	return targets
}

// nxTargets translates the targets of one project.
func (b *builder) nxTargets(np *nxProject, nx *nxJSON, cacheable map[string]bool) {
	for _, name := range slices.Sorted(maps.Keys(np.targets)) {
		t := np.targets[name]
		key := "targets." + name
		if !vxTaskName(name) {
			b.projectTodo(np.project, np.file, key, "the target name %q has a character vx task names cannot hold (#, ^, a space or a control character): rename it, or declare the task under another name in vx.project.ts", name)
			continue
		}
		if def, ok := nxTargetDefault(nx.TargetDefaults, name, t.Executor); ok {
			t = t.over(def)
		}
		opts := map[string]json.RawMessage{}
		maps.Copy(opts, t.Options)
		if c, ok := t.Configurations[t.DefaultConfiguration]; ok {
			maps.Copy(opts, c)
		}
		continuous := t.Continuous != nil && *t.Continuous
		executor := t.Executor
		if executor == "" && t.Command != "" {
			executor = "nx:run-commands"
		}
		if executor == "" {
			if _, ok := np.scripts[name]; ok {
				executor = "nx:run-script"
				opts["script"], _ = json.Marshal(name)
			}
		}
		spec := &taskSpec{Persistent: continuous}
		script, ok := b.nxCommand(np, key, executor, t, opts, spec)
		if !ok {
			continue
		}
		if !spec.Persistent && isLongRunning(name, script) {
			spec.Persistent = true
			b.noteItem(notePersistent, np.name+"#"+name)
		}
		spec.DependsOn = b.nxDependsOn(np, np.file, key+".dependsOn", t.DependsOn)
		inputs := t.Inputs
		if inputs == nil {
			// Nx's inputs when a target names none (DEFAULT_INPUTS of its task hasher): the project's
			// files and, transitively, its dependencies'.
			inputs = []json.RawMessage{json.RawMessage(`"default"`), json.RawMessage(`"^default"`)}
		}
		var set nxInputSet
		b.nxInputs(np, np.file, key+".inputs", inputs, map[string]bool{}, &set)
		spec.Inputs, spec.Env = b.nxInputGlobs(&set), set.env
		if t.Outputs != nil {
			spec.Outputs = b.nxOutputs(np, key+".outputs", t.Outputs, opts)
		} else {
			spec.Outputs = b.nxDefaultOutputs(np, name, key, t, opts)
		}
		cached := cacheable[name]
		if t.Cache != nil {
			cached = *t.Cache
		}
		spec.NoCache = !cached
		if spec.NoCache || spec.Persistent {
			spec.Inputs = withoutDepInputs(spec.Inputs) // no key to keep: the task always runs
		}
		if isCleanup(name, script) {
			spec.NotInAll = true
			if !spec.NoCache {
				spec.NoCache = true
			}
			b.noteItem(noteCleanupNoCache, np.name+"#"+name)
		}
		if _, own := np.config.Targets[name]; !own && executor == "nx:run-script" {
			b.plain[spec] = true
		}
		np.tasks[name] = spec
	}
}

// nxCommand sets spec's command (and exec env) from a target's executor, answering the text the
// command runs (for the persistent and clean-up checks) and false where the target gives no task.
func (b *builder) nxCommand(np *nxProject, key, executor string, t nxTarget, opts map[string]json.RawMessage, spec *taskSpec) (script string, ok bool) {
	switch executor {
	case "nx:run-commands":
		cmd, ok := b.nxRunCommands(np, key, t, opts)
		if !ok {
			return "", false
		}
		spec.Command, script = cmd, cmd
		spec.ExecEnv = nxEnv(opts)
		if _, ok := opts["envFile"]; ok {
			b.projectTodo(np.project, np.file, key+".options.envFile", "vx does not read env files: list the variables in exec.env")
		}
	case "nx:run-script":
		var name string
		_ = json.Unmarshal(opts["script"], &name)
		if name == "" {
			b.projectTodo(np.project, np.file, key+".options.script", "nx:run-script without a script name")
			return "", false
		}
		spec.Command, script = b.repo.run(name), np.scripts[name]
	case "nx:noop":
		// A target that only gathers its dependsOn (a "test:all"): a task that does nothing keeps
		// the edges through it.
		spec.Command = "true"
		b.noteItem(noteNxNoop, np.name+"#"+key[len("targets."):])
	case "":
		b.projectTodo(np.project, np.file, key, "the target names no executor or command (a plugin may infer it): declare its command in vx.project.ts")
		return "", false
	default:
		also := ""
		if spec.Persistent { // a continuous target
			also = ", with persistent: true (a continuous target)"
		}
		b.projectTodo(np.project, np.file, key+".executor", "the executor %s has no vx equivalent: declare the command it runs (the tool's own CLI) in vx.project.ts%s", executor, also)
		return "", false
	}
	return script, true
}

// nxRunCommands builds the shell command of an nx:run-commands target. Nx runs it at the workspace
// root (or options.cwd, relative to it); vx runs a task in its project folder, so the command
// changes folder first.
func (b *builder) nxRunCommands(np *nxProject, key string, t nxTarget, opts map[string]json.RawMessage) (string, bool) {
	var cmds []string
	var one string
	if json.Unmarshal(opts["command"], &one) == nil && one != "" {
		cmds = append(cmds, one)
	} else if t.Command != "" {
		cmds = append(cmds, t.Command)
	}
	var list []json.RawMessage
	if json.Unmarshal(opts["commands"], &list) == nil {
		for _, c := range list {
			var s string
			if json.Unmarshal(c, &s) != nil {
				var obj struct {
					Command string `json:"command"`
				}
				_ = json.Unmarshal(c, &obj)
				s = obj.Command
			}
			if s != "" {
				cmds = append(cmds, s)
			}
		}
	}
	if len(cmds) == 0 {
		b.todo(np.file, key+".options", "nx:run-commands without a command")
		return "", false
	}
	var parallel = true
	_ = json.Unmarshal(opts["parallel"], &parallel)
	if len(cmds) > 1 && parallel {
		b.note("%s %s: Nx runs its commands in parallel; vx runs them one after another", np.file, key)
	}
	cwd := "."
	var c string
	if json.Unmarshal(opts["cwd"], &c) == nil && c != "" {
		cwd = path.Clean(strings.ReplaceAll(c, "{projectRoot}", np.dir))
		cwd = strings.TrimPrefix(cwd, "{workspaceRoot}/")
	}
	toRoot := relSlash(cwd, ".")
	for i, cmd := range cmds {
		cmd = strings.ReplaceAll(cmd, "{projectRoot}", relSlash(cwd, np.dir))
		cmd = strings.ReplaceAll(cmd, "{workspaceRoot}", toRoot)
		cmd = strings.ReplaceAll(cmd, "{projectName}", np.name)
		cmds[i] = cmd
	}
	command := strings.Join(cmds, " && ")
	if len(cmds) > 1 {
		for i, cmd := range cmds {
			cmds[i] = "(" + cmd + ")"
		}
		command = strings.Join(cmds, " && ")
	}
	if rel := relSlash(np.dir, cwd); rel != "." {
		command = "cd " + shellWord(rel) + " && " + command
	}
	if _, ok := opts["args"]; ok {
		b.note("%s %s.options.args: extra arguments are not translated", np.file, key)
	}
	return command, true
}

// relSlash is the slash path from folder from to folder to, both relative to the root.
func relSlash(from, to string) string {
	rel, err := filepath.Rel(filepath.FromSlash(from), filepath.FromSlash(to))
	if err != nil {
		return to
	}
	return filepath.ToSlash(rel)
}

// nxEnv reads the env option of nx:run-commands as exec.env values.
func nxEnv(opts map[string]json.RawMessage) map[string]string {
	var env map[string]string
	if json.Unmarshal(opts["env"], &env) != nil || len(env) == 0 {
		return nil
	}
	return env
}

// nxInputSet is what a target's Nx inputs come to.
type nxInputSet struct {
	// whole is true when the inputs take in every file of the project ({projectRoot}/**/*).
	whole bool
	// globs are project globs ("src/**", "!**/*.spec.ts") and root globs ("//jest.preset.js").
	globs []string
	env   []string
	// deps is true when the inputs take in every file of the project's dependencies (^default);
	// depGlobs are the globs a named dependency input (^production, {input, dependencies: true})
	// takes in each dependency, written as ^GLOB.
	deps     bool
	depGlobs []string
}

// nxWholeProject lists the Nx spellings of every file of the project.
var nxWholeProject = map[string]bool{"{projectRoot}": true, "{projectRoot}/": true, "{projectRoot}/**": true, "{projectRoot}/**/*": true}

// nxGlobalInputs makes globalInputs of the workspace files that nx.json's default named input takes
// in (through sharedGlobals, as a rule): every target that names no inputs, or names default, has
// them in its hash.
func (b *builder) nxGlobalInputs(nx *nxJSON) {
	b.nxGlobal = map[string]bool{}
	var walk func(name string, seen map[string]bool)
	walk = func(name string, seen map[string]bool) {
		if seen[name] {
			return
		}
		seen[name] = true
		for _, it := range nx.NamedInputs[name] {
			var s string
			if json.Unmarshal(it, &s) != nil {
				var obj struct {
					Fileset string `json:"fileset"`
				}
				_ = json.Unmarshal(it, &obj)
				s = obj.Fileset
			}
			bare := strings.TrimPrefix(s, "!")
			switch {
			case strings.HasPrefix(bare, "{workspaceRoot}"):
				b.nxGlobal[s] = true
				g := rootGlob(strings.TrimPrefix(bare, "{workspaceRoot}"))
				if strings.HasPrefix(s, "!") {
					g = "!" + g
				}
				b.addGlobalInput(g)
			case nx.NamedInputs[s] != nil:
				walk(s, seen)
			}
		}
	}
	walk("default", map[string]bool{})
	if len(b.globalInputs) > 0 {
		b.note("nx.json: the workspace files of the default named input (%s) became globalInputs: they are in nearly every target's hash", strings.Join(b.globalInputs, ", "))
	}
}

// nxRootTsconfigs are the files Nx's task hasher reads as the root tsconfig, the first that exists
// (getRootTsConfigPath).
var nxRootTsconfigs = []string{"tsconfig.base.json", "tsconfig.json"}

// nxRootTsconfig carries a default of Nx's task hasher across: every task's hash, whatever its
// inputs, takes in the compilerOptions of the root tsconfig.base.json, else tsconfig.json (their
// paths narrowed to the project's own). vx keys on the whole file, a little wider (a comment moves
// it too), never narrower.
func (b *builder) nxRootTsconfig() {
	for _, name := range nxRootTsconfigs {
		if !exists(filepath.Join(b.repo.root, name)) {
			continue
		}
		if !b.declaresRootFile(name) {
			g := rootGlob(name)
			b.addGlobalInput(g)
			b.note("Nx hashes the compilerOptions of the root %s into every task's hash: '%s' became globalInputs (the whole file, so an edit of its comments moves every key too)", name, g)
		}
		return
	}
}

// nxInputs expands Nx inputs into set. file and key say where items are written, for todos.
func (b *builder) nxInputs(np *nxProject, file, key string, items []json.RawMessage, expanding map[string]bool, set *nxInputSet) {
	for _, it := range items {
		var s string
		if json.Unmarshal(it, &s) != nil {
			var obj struct {
				Fileset                   string          `json:"fileset"`
				Env                       string          `json:"env"`
				Runtime                   string          `json:"runtime"`
				Input                     string          `json:"input"`
				Projects                  json.RawMessage `json:"projects"`
				Dependencies              bool            `json:"dependencies"`
				ExternalDependencies      []string        `json:"externalDependencies"`
				DependentTasksOutputFiles string          `json:"dependentTasksOutputFiles"`
			}
			_ = json.Unmarshal(it, &obj)
			switch {
			case obj.Fileset != "":
				s = obj.Fileset
			case obj.Env != "":
				set.env = addUnique(set.env, obj.Env)
				continue
			case obj.Runtime != "":
				b.noteItem("Nx runtime inputs were not translated (vx keys a task on files and env, not on a command's output)", obj.Runtime)
				continue
			case obj.ExternalDependencies != nil:
				b.noteItem("Nx externalDependencies inputs were not translated (vx keys each task on the lockfile's versions of its project's dependencies)", strings.Join(obj.ExternalDependencies, ", "))
				continue
			case obj.DependentTasksOutputFiles != "":
				b.noteItem("Nx dependentTasksOutputFiles inputs were not translated (vx keys a task on the keys of the tasks it depends on)", obj.DependentTasksOutputFiles)
				continue
			case obj.Input != "" && (obj.Dependencies || len(obj.Projects) > 0 && string(obj.Projects) != `"self"`):
				s = "^" + obj.Input
			case obj.Input != "":
				s = obj.Input
			default:
				b.projectTodo(np.project, file, key, "an input vx cannot read: %s", string(it))
				continue
			}
		}
		neg := strings.HasPrefix(s, "!")
		bare := strings.TrimPrefix(s, "!")
		switch {
		case strings.HasPrefix(s, "^"):
			b.nxDependencyInput(np, file, key, strings.TrimPrefix(s, "^"), expanding, set)
		case nxWholeProject[bare] && !neg:
			set.whole = true
		case strings.HasPrefix(bare, "{projectRoot}/"):
			g := strings.TrimPrefix(bare, "{projectRoot}/")
			if neg {
				g = "!" + g
			}
			set.globs = addUnique(set.globs, g)
		case strings.HasPrefix(bare, "{workspaceRoot}"):
			if b.nxGlobal[s] {
				continue // in globalInputs already
			}
			g := rootGlob(strings.TrimPrefix(bare, "{workspaceRoot}"))
			if neg {
				g = "!" + g
			}
			set.globs = addUnique(set.globs, g)
		case np.namedInputs[s] != nil:
			if expanding[s] {
				continue
			}
			expanding[s] = true
			b.nxInputs(np, np.namedInputsFile[s], "namedInputs."+s, np.namedInputs[s], expanding, set)
			delete(expanding, s)
		case s == "default":
			set.whole = true // Nx's default when nx.json does not define it: every file of the project
		default:
			b.projectTodo(np.project, file, key, "named input %q is not defined in nx.json or the project", s)
		}
	}
}

// nxInputGlobs turns an input set into vx inputs. Every file of the project is vx's default (no
// inputs); what Nx adds to it or takes from it is written beside '$default'. A root file of nx.json's
// default named input (sharedGlobals) is a global input already (nxGlobalInputs); other root files
// stay the task's own.
func (b *builder) nxInputGlobs(set *nxInputSet) []string {
	globs := b.nxOwnGlobs(set)
	if !set.deps && len(set.depGlobs) == 0 {
		return globs
	}
	if globs == nil {
		globs = []string{pathglob.Default}
	}
	if set.deps {
		return append(slices.Clone(globs), graph.DependencyDefault)
	}
	globs = slices.Clone(globs)
	for _, g := range set.depGlobs {
		globs = append(globs, graph.DependencyPrefix+g)
	}
	return globs
}

// nxDependencyInput adds a dependency input (^name) to set: ^default, or a name no input
// defines, takes every file of each dependency; a named input, its project globs in each
// dependency (^GLOB), its root files and env as the task's own.
func (b *builder) nxDependencyInput(np *nxProject, file, key, name string, expanding map[string]bool, set *nxInputSet) {
	if name == "default" || np.namedInputs[name] == nil || expanding[name] {
		set.deps = true
		return
	}
	var sub nxInputSet
	expanding[name] = true
	b.nxInputs(np, np.namedInputsFile[name], "namedInputs."+name, np.namedInputs[name], expanding, &sub)
	delete(expanding, name)
	set.env = addUnique(set.env, sub.env...)
	own := []string{}
	for _, g := range sub.globs {
		if strings.HasPrefix(strings.TrimPrefix(g, "!"), "//") {
			set.globs = addUnique(set.globs, g) // a root file is every project's: the task's own
		} else {
			own = append(own, g)
		}
	}
	switch {
	case sub.deps:
		set.deps = true // a dependency input within: every file, the wider answer
		b.noteItem(noteDepInputs, "^"+name)
	case sub.whole && len(own) == 0:
		set.deps = true // every file of each dependency: ^default
	case sub.whole:
		set.depGlobs = addUnique(set.depGlobs, pathglob.Default)
		set.depGlobs = addUnique(set.depGlobs, own...)
	default:
		set.depGlobs = addUnique(set.depGlobs, own...)
	}
}

// withoutDepInputs drops the dependency inputs (^default, ^GLOB) from inputs, and the '$default'
// they needed beside them.
func withoutDepInputs(inputs []string) []string {
	isDep := func(g string) bool { return strings.HasPrefix(g, graph.DependencyPrefix) }
	if !slices.ContainsFunc(inputs, isDep) {
		return inputs
	}
	inputs = slices.DeleteFunc(slices.Clone(inputs), isDep)
	if len(inputs) == 1 && inputs[0] == pathglob.Default {
		return nil
	}
	return inputs
}

// noteDepInputs heads the note on Nx dependency inputs naming another named input than default.
const noteDepInputs = "Nx dependency inputs inside a named dependency input became ^default (every git-visible file of each project depended on: more than Nx takes, so vx misses whenever Nx does, and sometimes more)"

// nxOwnGlobs is nxInputGlobs for the project's own files.
func (b *builder) nxOwnGlobs(set *nxInputSet) []string {
	if !set.whole {
		if set.globs == nil {
			return []string{} // no file of the project: only env and the upstream keys
		}
		return set.globs
	}
	var extra []string
	for _, g := range set.globs {
		if strings.HasPrefix(g, "//") && slices.Contains(b.globalInputs, g) {
			continue // nx.json's default named input: a global input already
		}
		extra = append(extra, g)
	}
	if len(extra) == 0 {
		return nil
	}
	return append([]string{pathglob.Default}, extra...)
}

// nxOutputs translates Nx outputs (paths from the workspace root, with tokens) into vx output globs:
// relative to the project folder inside it, from the root ("//dist/apps/web/**") outside it.
func (b *builder) nxOutputs(np *nxProject, key string, outputs []string, opts map[string]json.RawMessage) []string {
	var out []string
	for _, o := range outputs {
		neg := strings.HasPrefix(o, "!")
		p := strings.ReplaceAll(strings.TrimPrefix(o, "!"), "{projectRoot}", np.dir)
		p = strings.ReplaceAll(p, "{projectName}", np.name)
		p = strings.TrimPrefix(strings.ReplaceAll(p, "{workspaceRoot}", "."), "./")
		for strings.Contains(p, "{options.") {
			start := strings.Index(p, "{options.")
			end := strings.Index(p[start:], "}")
			if end < 0 {
				break
			}
			var v string
			if json.Unmarshal(opts[p[start+len("{options."):start+end]], &v) != nil || v == "" {
				b.projectTodo(np.project, np.file, key, "%q names an option the target does not set: declare the output in vx.project.ts", o)
				p = ""
				break
			}
			p = p[:start] + v + p[start+end+1:]
		}
		if p == "" {
			continue
		}
		p = path.Clean(p)
		if !strings.ContainsAny(p, "*?[{") && !hasExtension(p) {
			p += "/**"
		}
		g := p
		if np.dir != "." {
			rel, inside := strings.CutPrefix(p, np.dir+"/")
			if inside {
				g = rel
			} else {
				g = rootGlob(p)
			}
		}
		if neg {
			g = "!" + g
		}
		out = addUnique(out, g)
	}
	sort.SliceStable(out, func(i, j int) bool {
		return !strings.HasPrefix(out[i], "!") && strings.HasPrefix(out[j], "!")
	})
	return out
}

// nxDefaultOutputs is what Nx caches of a target that names no outputs
// (getOutputsForTargetAndConfiguration): options.outputPath where set, else for a build or
// prepare target dist/{projectRoot}, {projectRoot}/dist, {projectRoot}/build and
// {projectRoot}/public, else nothing. Of the build defaults vx declares those git ignores: a
// tracked folder (public/ is often source) is no output a restore may overwrite; vx init notes the
// others.
func (b *builder) nxDefaultOutputs(np *nxProject, name, key string, t nxTarget, opts map[string]json.RawMessage) []string {
	var one string
	var list []string
	switch {
	case json.Unmarshal(opts["outputPath"], &one) == nil && one != "":
		return b.nxOutputs(np, key+".options.outputPath", []string{one}, opts)
	case json.Unmarshal(opts["outputPath"], &list) == nil && len(list) > 0:
		return b.nxOutputs(np, key+".options.outputPath", list, opts)
	case name != "build" && name != "prepare":
		return nil
	}
	var candidates []string
	for _, c := range []string{path.Join("dist", np.dir), path.Join(np.dir, "dist"), path.Join(np.dir, "build"), path.Join(np.dir, "public")} {
		candidates = addUnique(candidates, c)
	}
	ignored := b.repo.gitIgnored(candidates)
	var kept []string
	for i, c := range candidates {
		outside := i == 0 && np.dir != "."
		script := np.scripts[name] + "\n" + t.Command
		switch {
		case !ignored[c]:
			b.noteItem(noteNxDefaultOutputLeft, np.name+"#"+name+" "+c)
		case outside && !exists(filepath.Join(b.repo.root, filepath.FromSlash(c))) && !strings.Contains(script, c):
			// dist/{projectRoot} lies outside the project: declared, it is a literal path in each
			// project's config; left out where nothing is there yet and the command does not name it.
			b.noteItem(noteNxDefaultOutputAbsent, np.name+"#"+name+" "+c)
		default:
			kept = append(kept, c)
		}
	}
	if len(kept) > 0 {
		b.noteItem(noteNxDefaultOutputs, np.name+"#"+name)
	}
	return b.nxOutputs(np, key+".outputs", kept, opts)
}

const (
	noteNxNoop                = "nx:noop targets became tasks whose command is `true`: they run only what they depend on"
	noteNxDefaultOutputs      = "targets naming no outputs got those of Nx's default outputs (dist/{projectRoot}, {projectRoot}/dist, /build, /public) that git ignores"
	noteNxDefaultOutputLeft   = "Nx default outputs left out because git does not ignore them (a restore must never overwrite tracked files; declare outputs if the target writes there)"
	noteNxDefaultOutputAbsent = "Nx default outputs outside the project left out: nothing is there yet and the command does not name it (declare outputs if the target writes there)"
)

// hasExtension reports whether the last element of p looks like a file name ("app.js") rather than
// a folder (".next", "dist").
func hasExtension(p string) bool {
	base := path.Base(p)
	dot := strings.LastIndexByte(base, '.')
	return dot > 0 && dot < len(base)-1
}
