package initplan

import (
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/vzn/vx/engine/pathglob"
)

// rootConfigPatterns are the build tools' config files a root folder may hold for every package.
var rootConfigPatterns = []string{"tsdown.config.*", "tsup.config.*", "vite.config.*", "rollup.config.*", "babel.config.*", ".swcrc"}

// runsAtRoot matches a package script that runs its work at the workspace root: a root script
// (pnpm -w, --workspace-root, yarn run -T) or a command that changes to the root.
var runsAtRoot = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|\s)(-w|--workspace-root|-T|--top-level)(\s|$)|(^|&&\s*)cd (\.\./)+\.\.?(\s|$)|(^|&&\s*)cd \.\.(\s|$)`)
})

// rootConfigInputs makes each root config file (tsdown.config.ts, .swcrc, …) an input of the
// cached tasks that read it: those whose command, or the package script it runs, names the file,
// and those that run at the root, where the tool finds it by itself. A root config file no task
// reads so is noted, with the globalInputs line that would key every task on it.
func (b *builder) rootConfigInputs() {
	var files []string
	for _, pat := range rootConfigPatterns {
		names, _ := filepath.Glob(filepath.Join(b.repo.root, pat))
		for _, n := range names {
			files = append(files, filepath.Base(n))
		}
	}
	for _, f := range files {
		g := "//" + f
		if containsString(b.globalInputs, g) {
			continue
		}
		taken := false
		for _, p := range b.projects {
			for _, name := range slices.Sorted(maps.Keys(p.tasks)) {
				t := p.tasks[name]
				if t.NoCache || t.Persistent {
					continue
				}
				text := t.Command + "\n" + p.scripts[name]
				if p.isRoot() || runsAtRoot().MatchString(text) || strings.Contains(text, f) {
					t.Inputs = withInput(t.Inputs, g)
					taken = true
				}
			}
		}
		if !taken {
			b.noteItem("root config files no task's inputs take in (a change to one moves no key): add them to globalInputs if the packages' builds read them", "globalInputs: ['"+g+"']")
		} else {
			b.noteItem("root config files became inputs of the tasks whose command names them or runs at the root", g)
		}
	}
}

// withInput adds glob to inputs: beside the default set when inputs are the default.
func withInput(inputs []string, glob string) []string {
	if inputs == nil {
		return []string{pathglob.Default, glob}
	}
	return addUnique(slices.Clone(inputs), glob)
}
