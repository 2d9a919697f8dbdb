package initplan

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// fromScripts makes tasks of the scripts the packages share, run through the package manager.
func (b *builder) fromScripts() error {
	r := b.repo
	b.workspaceProjects()
	b.sources = append(b.sources, "package.json scripts")
	b.noteWorkspace()
	if len(b.projects) == 0 {
		b.note("no package.json found: the config declares no project yet")
		return nil
	}

	holders := map[string][]*project{}
	for _, p := range b.projects {
		for name := range p.scripts {
			holders[name] = append(holders[name], p)
		}
	}
	var lone []string
	for _, name := range slices.Sorted(maps.Keys(holders)) {
		ps := holders[name]
		first := ps[0]
		switch {
		case lifecycleScripts[name]:
			continue
		case isHook(name, first.scripts):
			continue
		case len(ps) < 2 && len(b.projects) > 1:
			lone = append(lone, fmt.Sprintf("%s (%s)", name, first.name))
			continue
		}
		for _, p := range ps {
			t := &taskSpec{Command: r.run(name)}
			if name == "build" {
				t.DependsOn = []string{"^build"}
			}
			script := p.scripts[name]
			if isLongRunning(name, script) {
				t.Persistent = true
				b.noteItem(notePersistent, byName(p.name+"#"+name, name, isLongRunning(name, "")))
			}
			if isCleanup(name, script) {
				t.NotInAll, t.NoCache = true, true
				b.noteItem(noteCleanupNoCache, byName(p.name+"#"+name, name, isCleanup(name, "")))
			}
			p.tasks[name] = t
		}
	}
	b.scriptsGraph()
	if len(lone) > 0 {
		sort.Strings(lone)
		b.note("scripts of one package only were left out (add them to its vx.project.ts to run them with vx): %s", strings.Join(lone, ", "))
	}
	if len(holders["build"]) > 0 {
		b.note("build waits for ^build (the build of each dependency); no other task waits for anything: add dependsOn where a task needs another")
		if !slices.ContainsFunc(b.projects, func(p *project) bool { return p.tasks["build"] != nil && p.tasks["build"].Outputs != nil }) {
			b.note("no outputs are declared: add outputs (e.g. ['dist/**']) to the tasks whose files a cache hit should restore")
		}
	}
	return nil
}

// workspaceProjects makes the projects of a package-manager workspace: every workspace package, or
// in a single-package repository the root itself.
func (b *builder) workspaceProjects() {
	r := b.repo
	b.packageProjects()
	if len(b.projects) > 0 || r.rootPkg == nil {
		b.globs = projectGlobs(r.root, r.globs, b.projectDirs())
		return
	}
	name := r.rootPkg.Name
	if name == "" {
		name = filepath.Base(r.root)
	}
	r.packages["."] = r.rootPkg
	b.projects = append(b.projects, &project{dir: ".", name: name, source: "package.json", scripts: r.rootPkg.Scripts, tasks: map[string]*taskSpec{}})
	b.globs = []string{"."}
}
