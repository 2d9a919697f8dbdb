package initplan

import (
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/vzn/vx/engine/pathglob"
	"github.com/vzn/vx/engine/workspace"
)

// rootGlob writes a glob relative to the workspace root in vx's spelling, "//path" ("!//path" for
// an exclusion).
func rootGlob(g string) string {
	neg := ""
	if rest, ok := strings.CutPrefix(g, "!"); ok {
		neg, g = "!", rest
	}
	g = strings.TrimPrefix(strings.TrimPrefix(g, "/"), "./")
	if g == "" {
		g = "**"
	}
	return neg + pathglob.RootPrefix + path.Clean(g)
}

// addGlobalInput adds a "//" glob to the workspace's globalInputs.
func (b *builder) addGlobalInput(g string) {
	b.globalInputs = addUnique(b.globalInputs, g)
}

// checkGlobs drops, with a todo, every planned glob that vx would refuse (one that climbs out of
// the project with "..", an absolute path), so that the written config always loads.
func (b *builder) checkGlobs() {
	keep := func(file, key string, globs []string) []string {
		if globs == nil {
			return nil
		}
		out := []string{}
		for _, g := range globs {
			if err := pathglob.Check(g); err != nil {
				b.todo(file, key, "left out: %v", err)
				continue
			}
			out = append(out, g)
		}
		return out
	}
	b.globalInputs = keep(workspace.ConfigFileName, "globalInputs", b.globalInputs)
	check := func(file, name string, t *taskSpec) {
		t.Inputs = keep(file, "tasks."+name+".inputs", t.Inputs)
		if t.Outputs = keep(file, "tasks."+name+".outputs", t.Outputs); len(t.Outputs) == 0 {
			t.Outputs = nil
		}
	}
	for _, name := range slices.Sorted(maps.Keys(b.fixed)) {
		check(workspace.ConfigFileName, name, b.fixed[name])
	}
	for _, p := range b.projects {
		for _, name := range slices.Sorted(maps.Keys(p.tasks)) {
			check(path.Join(p.dir, workspace.ProjectConfigFileName), name, p.tasks[name])
		}
	}
}
