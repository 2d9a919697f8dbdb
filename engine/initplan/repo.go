package initplan

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
	"go.yaml.in/yaml/v3"
)

// packageJSON holds the fields of a package.json that vx init reads.
type packageJSON struct {
	Name                 string            `json:"name"`
	Scripts              map[string]string `json:"scripts"`
	Workspaces           json.RawMessage   `json:"workspaces"`
	PackageManager       string            `json:"packageManager"`
	Dependencies         map[string]string `json:"dependencies"`
	DevDependencies      map[string]string `json:"devDependencies"`
	PeerDependencies     map[string]string `json:"peerDependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	Nx                   *nxProjectConfig  `json:"nx"`
	// Main, Module, Types, Typings, Exports and Files say where the package's code is: in a
	// package built before use, inside its build output.
	Main    string          `json:"main"`
	Module  string          `json:"module"`
	Types   string          `json:"types"`
	Typings string          `json:"typings"`
	Exports json.RawMessage `json:"exports"`
	Files   []string        `json:"files"`
}

// workspaceGlobs returns the workspaces globs of a root package.json, in the array form
// (["packages/*"]) or the object form ({"packages": ["packages/*"]}).
func (p *packageJSON) workspaceGlobs(file string) ([]string, error) {
	if len(p.Workspaces) == 0 || string(p.Workspaces) == "null" {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(p.Workspaces, &list); err == nil {
		return list, nil
	}
	var obj struct {
		Packages []string `json:"packages"`
	}
	if err := json.Unmarshal(p.Workspaces, &obj); err != nil {
		return nil, fmt.Errorf("%s: workspaces is neither a list of globs nor {\"packages\": [...]}", file)
	}
	return obj.Packages, nil
}

// repo is what vx init learned about the repository, whatever the mode.
type repo struct {
	root string
	// rootPkg is the root package.json; nil when there is none.
	rootPkg *packageJSON
	// pm is the package manager: npm, pnpm, yarn or bun.
	pm string
	// pmSource says how pm was decided ("pnpm-lock.yaml", "packageManager", "default").
	pmSource string
	// globs are the workspace globs as declared, and globsFile where they were declared.
	globs     []string
	globsFile string
	// packages holds every workspace package found, by folder relative to the root.
	packages map[string]*packageJSON
}

// lockfiles maps each lockfile to its package manager, in the order they are looked for.
var lockfiles = []struct{ file, pm string }{
	{"pnpm-lock.yaml", "pnpm"},
	{"bun.lock", "bun"},
	{"bun.lockb", "bun"},
	{"yarn.lock", "yarn"},
	{"package-lock.json", "npm"},
	{"npm-shrinkwrap.json", "npm"},
}

// scanRepo reads the root package.json, decides the package manager and finds the workspace packages.
func scanRepo(root string) (*repo, error) {
	r := &repo{root: root, packages: map[string]*packageJSON{}}
	var pkg packageJSON
	ok, err := readJSON(root, "package.json", &pkg)
	if err != nil {
		return nil, err
	}
	if ok {
		r.rootPkg = &pkg
	}
	r.pm, r.pmSource = "npm", "default"
	for _, lf := range lockfiles {
		if exists(filepath.Join(root, lf.file)) {
			r.pm, r.pmSource = lf.pm, lf.file
			break
		}
	}
	if r.pmSource == "default" && r.rootPkg != nil && r.rootPkg.PackageManager != "" {
		name, _, _ := strings.Cut(r.rootPkg.PackageManager, "@")
		switch name {
		case "npm", "pnpm", "yarn", "bun":
			r.pm, r.pmSource = name, "package.json packageManager"
		}
	}

	if r.rootPkg != nil {
		globs, err := r.rootPkg.workspaceGlobs("package.json")
		if err != nil {
			return nil, err
		}
		if len(globs) > 0 {
			r.globs, r.globsFile = globs, "package.json"
		}
	}
	if data, err := os.ReadFile(filepath.Join(root, "pnpm-workspace.yaml")); err == nil {
		globs, err := pnpmWorkspaceGlobs(string(data))
		if err != nil {
			return nil, fmt.Errorf("pnpm-workspace.yaml: %w", err)
		}
		r.globs, r.globsFile = globs, "pnpm-workspace.yaml"
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read pnpm-workspace.yaml: %w", err)
	}
	for i, g := range r.globs {
		r.globs[i] = cleanGlob(g)
	}

	dirs, err := matchDirs(root, r.globs, "package.json")
	if err != nil {
		return nil, err
	}
	for _, dir := range dirs {
		var p packageJSON
		if _, err := readJSON(root, path.Join(dir, "package.json"), &p); err != nil {
			return nil, err
		}
		r.packages[dir] = &p
	}
	return r, nil
}

// run is the command that runs a package script with the repository's package manager.
func (r *repo) run(script string) string {
	return r.pm + " run " + shellWord(script)
}

// cleanGlob drops the "./" and trailing "/" that workspace globs often carry.
func cleanGlob(g string) string {
	neg := strings.HasPrefix(g, "!")
	g = strings.TrimPrefix(g, "!")
	g = strings.TrimPrefix(g, "./")
	g = strings.TrimSuffix(g, "/")
	if g == "" {
		g = "."
	}
	if neg {
		return "!" + g
	}
	return g
}

// matchDirs lists the folders matched by the positive globs, less those matched by a negated one,
// that hold marker (a file name), skipping node_modules and dot folders as vx does; sorted.
func matchDirs(root string, globs []string, marker string) ([]string, error) {
	fsys := os.DirFS(root)
	found := map[string]bool{}
	var negs []string
	for _, g := range globs {
		if strings.HasPrefix(g, "!") {
			negs = append(negs, strings.TrimPrefix(g, "!"))
			continue
		}
		// Globbing "<g>/marker" finds the folders that hold the marker.
		matches, err := doublestar.Glob(fsys, path.Join(g, marker), doublestar.WithFilesOnly(), doublestar.WithNoFollow())
		if err != nil {
			return nil, fmt.Errorf("workspace glob %q: %w", g, err)
		}
		for _, m := range matches {
			dir := path.Dir(m)
			if !skipFolder(dir) {
				found[dir] = true
			}
		}
	}
	var dirs []string
	for d := range found {
		excluded := false
		for _, n := range negs {
			if ok, _ := doublestar.Match(n, d); ok {
				excluded = true
			}
		}
		if !excluded {
			dirs = append(dirs, d)
		}
	}
	sort.Strings(dirs)
	return dirs, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// pnpmWorkspaceGlobs reads the packages list of a pnpm-workspace.yaml; the other keys (catalogs,
// settings) are not read.
func pnpmWorkspaceGlobs(text string) ([]string, error) {
	var ws struct {
		Packages []string `yaml:"packages"`
	}
	if err := yaml.Unmarshal([]byte(text), &ws); err != nil {
		return nil, fmt.Errorf("packages must be a list of globs: %w", err)
	}
	return ws.Packages, nil
}

// shellWord quotes s for sh when it holds anything but plain word characters.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_:./@=+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// projectGlobs turns the declared workspace globs into vx projects globs that cover every
// project folder in dirs and nothing else. A glob that matches only project folders is kept as
// written, so packages added later are found; one that also matches a few other folders (as a
// package manager ignores a folder without package.json, where vx would make it a project) is kept
// with a `!` exclusion for each; one that matches mostly other folders (`packages/**`) is replaced
// by the project folders it matches. A glob that matches no folder yet is kept; the declared `!`
// globs are kept.
func projectGlobs(root string, declared, dirs []string) []string {
	isProject := map[string]bool{}
	for _, d := range dirs {
		isProject[d] = true
	}
	var negs []string
	for _, g := range declared {
		if n, ok := strings.CutPrefix(g, "!"); ok {
			negs = append(negs, n)
		}
	}
	excluded := func(d string) bool {
		for _, n := range negs {
			if ok, _ := doublestar.Match(n, d); ok {
				return true
			}
		}
		return false
	}
	covered := map[string]bool{}
	var out, extra []string
	fsys := os.DirFS(root)
	for _, g := range declared {
		if strings.HasPrefix(g, "!") {
			continue
		}
		matches, err := doublestar.Glob(fsys, g, doublestar.WithNoFollow())
		if err != nil {
			continue
		}
		var mine, others []string
		for _, m := range matches {
			if fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(m))); err != nil || !fi.IsDir() || skipFolder(m) || excluded(m) {
				continue
			}
			if isProject[m] {
				mine = append(mine, m)
			} else {
				others = append(others, m)
			}
		}
		switch {
		case len(mine) == 0 && len(others) == 0:
			out = addUnique(out, g) // no folder yet: kept for the packages to come
		case len(mine) == 0:
			continue
		case len(others) == 0 || !strings.Contains(g, "**") && len(others) < len(mine):
			out = addUnique(out, g)
			for _, o := range others {
				extra = addUnique(extra, "!"+o)
			}
			for _, m := range mine {
				covered[m] = true
			}
		default:
			for _, m := range mine {
				if !covered[m] {
					covered[m] = true
					out = append(out, m)
				}
			}
		}
	}
	for _, d := range dirs {
		if !covered[d] {
			out = append(out, d)
		}
	}
	if len(out) > 0 {
		for _, n := range negs {
			out = addUnique(out, "!"+n)
		}
		out = append(out, extra...)
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// skipFolder reports whether vx's projects globs pass over a folder: node_modules and dot folders.
func skipFolder(rel string) bool {
	for _, seg := range strings.Split(rel, "/") {
		if seg == "node_modules" || strings.HasPrefix(seg, ".") && seg != "." {
			return true
		}
	}
	return false
}

// dirGlobs makes projects globs for folders found by walking (Nx project.json folders): "parent/*"
// where every folder under parent is a project, else each folder by name.
func dirGlobs(root string, dirs []string) []string {
	byParent := map[string][]string{}
	for _, d := range dirs {
		byParent[path.Dir(d)] = append(byParent[path.Dir(d)], d)
	}
	isProject := map[string]bool{}
	for _, d := range dirs {
		isProject[d] = true
	}
	var out []string
	done := map[string]bool{}
	for _, d := range dirs {
		parent := path.Dir(d)
		if done[parent] {
			continue
		}
		done[parent] = true
		all := parent != "."
		if all {
			entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(parent)))
			if err != nil {
				all = false
			}
			for _, e := range entries {
				if e.IsDir() && !isProject[path.Join(parent, e.Name())] {
					all = false
				}
			}
		}
		if all && len(byParent[parent]) > 1 {
			out = append(out, parent+"/*")
		} else {
			out = append(out, byParent[parent]...)
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// turboFlag finds the config file a turbo command names with --root-turbo-json.
var turboFlag = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`--root-turbo-json(?:=|\s+)("[^"]+"|'[^']+'|[^\s;&|]+)`)
})

// turboConfig finds the repository's Turborepo config: the file a root package.json script names
// with --root-turbo-json (and that script's name), else turbo.json, else turbo.jsonc; "" when
// there is none.
func (r *repo) turboConfig() (file, script string) {
	if r.rootPkg != nil {
		for _, name := range slices.Sorted(maps.Keys(r.rootPkg.Scripts)) {
			cmd := r.rootPkg.Scripts[name]
			if !strings.Contains(cmd, "turbo") {
				continue
			}
			if m := turboFlag().FindStringSubmatch(cmd); m != nil {
				file := path.Clean(strings.Trim(m[1], `"'`))
				if !strings.HasPrefix(file, "../") && !path.IsAbs(file) && exists(filepath.Join(r.root, filepath.FromSlash(file))) {
					return file, name
				}
			}
		}
	}
	for _, f := range []string{"turbo.json", "turbo.jsonc"} {
		if exists(filepath.Join(r.root, f)) {
			return f, ""
		}
	}
	return "", ""
}
