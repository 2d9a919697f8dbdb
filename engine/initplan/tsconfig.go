package initplan

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/vzn/vx/engine/pathglob"
)

// tsconfigExtends reads the extends of a tsconfig file: one path or a list.
type tsconfigExtends struct {
	Extends json.RawMessage `json:"extends"`
}

// tsconfigNotes proposes, in the notes, the root files that projects' tsconfig files extend
// ("../../tsconfig.base.json") and no input declares: a change to one changes what the compiler
// does, yet moves no task's key. Only proposed: whether it belongs in globalInputs or in some tasks'
// inputs is the user's call.
func (b *builder) tsconfigNotes() {
	extendedBy := map[string][]string{}
	var files []string
	for _, p := range b.projects {
		if p.isRoot() {
			continue
		}
		dir := filepath.Join(b.repo.root, filepath.FromSlash(p.dir))
		names, _ := filepath.Glob(filepath.Join(dir, "tsconfig*.json"))
		for _, abs := range names {
			var tc tsconfigExtends
			if ok, err := readJSON(dir, filepath.Base(abs), &tc); !ok || err != nil {
				continue
			}
			var list []string
			var one string
			if json.Unmarshal(tc.Extends, &one) == nil {
				list = []string{one}
			} else {
				_ = json.Unmarshal(tc.Extends, &list)
			}
			for _, ext := range list {
				if !strings.HasPrefix(ext, "../") {
					continue // a package (resolved from node_modules) or a file of the project
				}
				rel := path.Join(p.dir, ext)
				if !strings.HasSuffix(rel, ".json") && !exists(filepath.Join(b.repo.root, filepath.FromSlash(rel))) {
					rel += ".json"
				}
				if strings.HasPrefix(rel, "../") || strings.HasPrefix(rel, p.dir+"/") || !exists(filepath.Join(b.repo.root, filepath.FromSlash(rel))) {
					continue
				}
				if _, ok := extendedBy[rel]; !ok {
					files = append(files, rel)
				}
				if !containsString(extendedBy[rel], p.name) {
					extendedBy[rel] = append(extendedBy[rel], p.name)
				}
			}
		}
	}
	for _, f := range files {
		if b.declaresRootFile(f) {
			continue
		}
		who := extendedBy[f]
		b.note("%s is extended by the tsconfig of %s (%s) but no input declares it, so changing it moves no task's key: add '%s' to globalInputs (or to the inputs of the tasks that compile)",
			f, plural(len(who), "project"), strings.Join(who, ", "), rootGlob(f))
	}
}

// declaresRootFile reports whether a glob of globalInputs, or a root glob ("//…") of some task's
// inputs, matches the root-relative file.
func (b *builder) declaresRootFile(file string) bool {
	if rootGlobsMatch(b.globalInputs, file) {
		return true
	}
	for _, t := range b.fixed {
		if rootGlobsMatch(t.Inputs, file) {
			return true
		}
	}
	for _, p := range b.projects {
		for _, t := range p.tasks {
			if rootGlobsMatch(t.Inputs, file) {
				return true
			}
		}
	}
	return false
}

// rootGlobsMatch reports whether one of globs that is a positive root glob matches the
// root-relative file.
func rootGlobsMatch(globs []string, file string) bool {
	for _, g := range globs {
		pg, err := pathglob.Parse(g)
		if err != nil || pg.Negated || !pg.Root {
			continue
		}
		if ok, _ := doublestar.Match(pg.Pattern, file); ok {
			return true
		}
	}
	return false
}

// plural writes a count with its noun: "1 project", "4 projects".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
