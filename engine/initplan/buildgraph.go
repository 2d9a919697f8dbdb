package initplan

import (
	"encoding/json"
	"maps"
	"path"
	"slices"
	"strings"
)

// compileTasks are the script names that build a package for its dependents to use.
var compileTasks = map[string]bool{"build": true, "compile": true}

// rewritingScripts are script names that rewrite the sources they read.
var rewritingScripts = map[string]bool{"format": true, "format:fix": true, "lint:fix": true, "fix": true}

// rewritesSources reports whether a script rewrites the sources it reads (a formatter's --write,
// a linter's --fix): such a task must run each time, never be restored from the cache.
func rewritesSources(name, command string) bool {
	if rewritingScripts[name] {
		return true
	}
	for _, words := range commands(command) {
		prog, args := program(words)
		switch prog {
		case "prettier", "biome":
			if slices.Contains(args, "--write") || slices.Contains(args, "-w") && prog == "prettier" {
				return true
			}
		case "eslint":
			if slices.Contains(args, "--fix") {
				return true
			}
		}
	}
	return false
}

// packageBuild is where a package's build output lies, as its package.json and tsconfig.json say.
type packageBuild struct {
	// outputs are output globs relative to the package ("dist/**", "index.d.ts").
	outputs []string
	// usedBuilt is true when main, module, types or exports point into the outputs: dependents
	// use the package built.
	usedBuilt bool
}

// readPackageBuild finds a package's build output: tsconfig.json's outDir, and the git-ignored
// folders (or files) that main, module, types, exports and files name. A files entry that git does
// not ignore holds tracked files and is never an output.
func (b *builder) readPackageBuild(dir string, pkg *packageJSON) packageBuild {
	var pb packageBuild
	var tc struct {
		CompilerOptions struct {
			OutDir string `json:"outDir"`
		} `json:"compilerOptions"`
	}
	outDir := ""
	if ok, err := readJSON(b.repo.root, path.Join(dir, "tsconfig.json"), &tc); ok && err == nil && tc.CompilerOptions.OutDir != "" {
		if d := path.Clean(tc.CompilerOptions.OutDir); d != "." && !strings.HasPrefix(d, "..") && !path.IsAbs(d) {
			outDir = d
		}
	}
	entry := []string{pkg.Main, pkg.Module, pkg.Types, pkg.Typings}
	entry = append(entry, exportPaths(pkg.Exports)...)
	tops := map[string]bool{} // top folder (or file) of each path named
	var pointed []string
	for _, e := range entry {
		if top := topOf(e); top != "" {
			tops[top] = true
			pointed = append(pointed, top)
		}
	}
	for _, f := range pkg.Files {
		if top := topOf(f); top != "" && !strings.ContainsAny(top, "*?[{!") {
			tops[top] = true
		}
	}
	var rootRel []string
	for _, top := range slices.Sorted(maps.Keys(tops)) {
		rootRel = append(rootRel, path.Join(dir, top))
	}
	ignored := b.repo.gitIgnored(rootRel)
	var outs []string
	if outDir != "" {
		outs = append(outs, outDir)
	}
	for _, top := range slices.Sorted(maps.Keys(tops)) {
		if ignored[path.Join(dir, top)] && top != outDir {
			outs = append(outs, top)
		}
	}
	for _, o := range outs {
		if hasExtension(o) {
			pb.outputs = addUnique(pb.outputs, o)
		} else {
			pb.outputs = addUnique(pb.outputs, o+"/**")
		}
		if slices.Contains(pointed, o) {
			pb.usedBuilt = true
		}
	}
	return pb
}

// topOf is the first element of a package-relative path ("./dist/index.js" → "dist"), "" for
// none or one leaving the package.
func topOf(p string) string {
	p = path.Clean(strings.TrimPrefix(p, "./"))
	if p == "." || p == "" || strings.HasPrefix(p, "..") || path.IsAbs(p) {
		return ""
	}
	top, _, _ := strings.Cut(p, "/")
	return top
}

// exportPaths lists the paths a package.json exports field names, at any depth of conditions.
func exportPaths(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if strings.HasPrefix(x, "./") {
				out = append(out, x)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(x[k])
			}
		}
	}
	walk(v)
	return out
}

// scriptsGraph gives the scripts-mode tasks what the packages' manifests say: a compile task
// (build, compile) of a package whose workspace dependencies are used built waits for theirs
// (^compile) and declares the package's build output; a script that rewrites sources is never
// cached.
func (b *builder) scriptsGraph() {
	builds := map[string]packageBuild{} // by project name
	for _, p := range b.projects {
		if pkg := b.repo.packages[p.dir]; pkg != nil {
			builds[p.name] = b.readPackageBuild(p.dir, pkg)
		}
	}
	for _, p := range b.projects {
		pkg := b.repo.packages[p.dir]
		if pkg == nil {
			continue
		}
		var deps []string
		for _, m := range []map[string]string{pkg.Dependencies, pkg.DevDependencies, pkg.PeerDependencies, pkg.OptionalDependencies} {
			for name := range m {
				if q := b.projectByName(name); q != nil && q != p {
					deps = addUnique(deps, name)
				}
			}
		}
		slices.Sort(deps)
		for _, name := range slices.Sorted(maps.Keys(p.tasks)) {
			t := p.tasks[name]
			if rewritesSources(name, p.scripts[name]) {
				if !t.NoCache {
					t.NoCache = true
					b.noteItem("cache: false for scripts that rewrite sources (a formatter's --write, a linter's --fix): they must run each time", p.name+"#"+name)
				}
				continue
			}
			if !compileTasks[name] || t.Persistent || t.NoCache {
				continue
			}
			if outs := builds[p.name].outputs; len(outs) > 0 && t.Outputs == nil {
				t.Outputs = slices.Clone(outs)
				b.noteItem("outputs from tsconfig.json's outDir and the git-ignored paths package.json's main, types, exports and files name", p.name+"#"+name)
			}
			for _, d := range deps {
				q := b.projectByName(d)
				if builds[d].usedBuilt && q.tasks[name] != nil && !containsString(t.DependsOn, "^"+name) {
					t.DependsOn = append(t.DependsOn, "^"+name)
					b.noteItem("waits for its dependencies' task of the same name: they are used built (main, types or exports point into their build output)", p.name+"#"+name)
				}
			}
		}
	}
}
