package initplan

import (
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// climbingPath matches a path a command names by climbing out of its folder
// ("../../tools/build-cts.js", "--config=../../../scripts/rollup.config.js").
var climbingPath = regexp.MustCompile(`(?:^|[\s='"(])((?:\.\./)+[\w@.+-][\w@.+/-]*)`)

// scriptRun matches a package manager running a script of the package ("npm run build:cts",
// "pnpm build:types", "yarn run x", "bun run x"); the name is the last group.
var scriptRun = regexp.MustCompile(`(?:^|[\s;&|(])(?:npm|pnpm|yarn|bun)\s+(?:(?:run|run-script)\s+)?([\w:.@/-]+)`)

// climbingFileInputs makes each workspace file outside the project that a cached task's package
// script names by a relative path ("node ../../tools/build-cts.js", "rollup --config
// ../../../scripts/rollup.config.js"), or a script it runs in turn does, an input of that task
// ("//tools/build-cts.js"): the command reads it, so a change to it changes what the task makes.
// Only files git shows, outside every project and node_modules, that no globalInputs glob already
// takes in.
func (b *builder) climbingFileInputs() {
	var dirs []string
	for _, p := range b.projects {
		if !p.isRoot() {
			dirs = append(dirs, p.dir)
		}
	}
	inProject := func(rel string) bool {
		return slices.ContainsFunc(dirs, func(d string) bool { return strings.HasPrefix(rel, d+"/") })
	}
	candidates := map[string]bool{}
	named := map[*taskSpec][]string{}
	for _, p := range b.projects {
		if p.isRoot() {
			continue // a root script names root files as they are: nothing climbs
		}
		for _, name := range slices.Sorted(maps.Keys(p.tasks)) {
			t := p.tasks[name]
			if t.NoCache || t.Persistent {
				continue
			}
			for _, tok := range climbingPaths(t.Command + "\n" + scriptChain(p.scripts, name)) {
				rel := path.Clean(path.Join(p.dir, tok))
				if strings.HasPrefix(rel, "../") || rel == "." || inProject(rel) || slices.Contains(strings.Split(rel, "/"), "node_modules") {
					continue
				}
				if fi, err := os.Stat(filepath.Join(b.repo.root, filepath.FromSlash(rel))); err != nil || !fi.Mode().IsRegular() {
					continue
				}
				candidates[rel] = true
				named[t] = addUnique(named[t], rel)
			}
		}
	}
	ignored := b.repo.gitIgnored(slices.Sorted(maps.Keys(candidates)))
	takers := map[string][]string{}
	for _, p := range b.projects {
		for _, name := range slices.Sorted(maps.Keys(p.tasks)) {
			t := p.tasks[name]
			for _, rel := range named[t] {
				if ignored[rel] || rootGlobsMatch(b.globalInputs, rel) {
					continue
				}
				t.Inputs = withInput(t.Inputs, rootGlob(rel))
				takers[rel] = append(takers[rel], p.name+"#"+name)
			}
		}
	}
	for _, rel := range slices.Sorted(maps.Keys(takers)) {
		who := takers[rel]
		shown := strings.Join(who[:min(len(who), 3)], ", ")
		if len(who) > 3 {
			shown += ", …"
		}
		b.noteItem("files outside the project that a task's scripts name by a relative path became its inputs (the command reads them)",
			fmt.Sprintf("%s (%s: %s)", rootGlob(rel), plural(len(who), "task"), shown))
	}
}

// scriptChain answers the text of the package script name and of the package's scripts it runs
// in turn through the package manager, each once.
func scriptChain(scripts map[string]string, name string) string {
	var texts []string
	seen := map[string]bool{}
	queue := []string{name}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		text, ok := scripts[n]
		if !ok || seen[n] {
			continue
		}
		seen[n] = true
		texts = append(texts, text)
		for _, m := range scriptRun.FindAllStringSubmatch(text, -1) {
			queue = append(queue, m[1])
		}
	}
	return strings.Join(texts, "\n")
}

// climbingPaths answers the paths in text that climb out of the folder they are named from.
func climbingPaths(text string) []string {
	var out []string
	for _, m := range climbingPath.FindAllStringSubmatch(text, -1) {
		out = addUnique(out, strings.TrimRight(m[1], "/"))
	}
	return out
}
