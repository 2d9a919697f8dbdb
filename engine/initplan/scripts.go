package initplan

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// lifecycleScripts are run by the package manager itself around installs and publishes, never as tasks.
var lifecycleScripts = map[string]bool{
	"preinstall": true, "install": true, "postinstall": true, "prepare": true, "prepublish": true,
	"prepublishOnly": true, "prepack": true, "postpack": true, "publish": true, "postpublish": true,
	"preversion": true, "version": true, "postversion": true, "dependencies": true,
}

// longRunningScripts are script names that start a server or a watcher.
var longRunningScripts = map[string]bool{
	"dev": true, "start": true, "serve": true, "watch": true, "preview": true, "storybook": true,
}

// watchFlag finds a command that watches rather than finishes.
var watchFlag = regexp.MustCompile(`(^|\s)(--watch|-w|watch)(\s|$)|\bnext dev\b|\bvite( |$)|\bnodemon\b`)

// isLongRunning reports whether a script is a server or a watcher rather than a task that ends.
func isLongRunning(name, command string) bool {
	return longRunningScripts[name] || watchFlag.MatchString(command)
}

// isHook reports whether name is a pre/post hook of another script the package has: the package
// manager runs it around that script.
func isHook(name string, scripts map[string]string) bool {
	for _, p := range []string{"pre", "post"} {
		if base, ok := strings.CutPrefix(name, p); ok && base != "" {
			if _, has := scripts[base]; has {
				return true
			}
		}
	}
	return false
}

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
		pkg := r.packages[p.dir]
		for name := range pkg.Scripts {
			holders[name] = append(holders[name], p)
		}
	}
	var lone []string
	for _, name := range sortedKeys(holders) {
		ps := holders[name]
		first := ps[0]
		file := path.Join(first.dir, "package.json")
		cmd := r.packages[first.dir].Scripts[name]
		switch {
		case lifecycleScripts[name]:
			continue
		case isHook(name, r.packages[first.dir].Scripts):
			continue
		case len(ps) < 2 && len(b.projects) > 1:
			lone = append(lone, fmt.Sprintf("%s (%s)", name, first.name))
			continue
		case isLongRunning(name, cmd):
			also := ""
			if len(ps) > 1 {
				also = fmt.Sprintf(" (%d packages have it)", len(ps))
			}
			b.todo(file, "scripts."+name, "a server or watcher%s: vx has no long-running tasks yet — run `%s` directly", also, r.run(name))
			continue
		}
		b.template[name] = true
		for _, p := range ps {
			t := &taskSpec{Command: r.run(name)}
			if name == "build" {
				t.DependsOn = []string{"^build"}
			}
			p.tasks[name] = t
		}
	}
	if len(lone) > 0 {
		sort.Strings(lone)
		b.note("scripts of one package only were left out (add them to its vx.project.ts to run them with vx): %s", strings.Join(lone, ", "))
	}
	if len(holders["build"]) > 0 {
		b.note("build waits for ^build (the build of each dependency); no other task waits for anything: add dependsOn where a task needs another")
		b.note("no outputs are declared: add outputs (e.g. ['dist/**']) to the tasks whose files a cache hit should restore")
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
	b.projects = append(b.projects, &project{dir: ".", name: name, source: "package.json", tasks: map[string]*taskSpec{}})
	b.globs = []string{"."}
}
