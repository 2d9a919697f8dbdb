package deploysubset

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"go.yaml.in/yaml/v3"

	"github.com/vzn/vx/engine/suggest"
	"github.com/vzn/vx/engine/vxerr"
)

// manifest is what prune reads of a package.json.
type manifest struct {
	Name                 string            `json:"name"`
	Version              string            `json:"version"`
	Workspaces           json.RawMessage   `json:"workspaces"`
	Dependencies         map[string]string `json:"dependencies"`
	DevDependencies      map[string]string `json:"devDependencies"`
	PeerDependencies     map[string]string `json:"peerDependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	PackageManager       string            `json:"packageManager"`
	PatchedDependencies  map[string]string `json:"patchedDependencies"`
	Pnpm                 struct {
		PatchedDependencies map[string]string `json:"patchedDependencies"`
	} `json:"pnpm"`
}

// pkg is one workspace package: the root (dir ".") or a member.
type pkg struct {
	name string
	dir  string // slash path relative to the root; "." for the root
	man  *manifest
}

// deps answers the package's dependencies by name and range: dependencies, optional and peer,
// and devDependencies unless production.
func (p *pkg) deps(production bool) map[string]string {
	all := map[string]string{}
	for _, m := range []map[string]string{p.man.PeerDependencies, p.man.OptionalDependencies, p.man.Dependencies} {
		for k, v := range m {
			all[k] = v
		}
	}
	if !production {
		for k, v := range p.man.DevDependencies {
			if _, ok := all[k]; !ok {
				all[k] = v
			}
		}
	}
	return all
}

// pmWorkspace is the package manager's view of the workspace: the root package and its members.
type pmWorkspace struct {
	root    *pkg
	members map[string]*pkg // by package name
	globs   []string
}

// loadWorkspace reads the root package.json and the members its workspace globs (or
// pnpm-workspace.yaml's packages) match.
func loadWorkspace(root string) (*pmWorkspace, error) {
	man, err := readManifest(filepath.Join(root, "package.json"))
	if err != nil {
		return nil, err
	}
	globs, err := workspaceGlobs(root, man)
	if err != nil {
		return nil, err
	}
	ws := &pmWorkspace{root: &pkg{name: man.Name, dir: ".", man: man}, members: map[string]*pkg{}, globs: globs}
	dirs, err := matchDirs(root, globs)
	if err != nil {
		return nil, err
	}
	for _, dir := range dirs {
		m, err := readManifest(filepath.Join(root, filepath.FromSlash(dir), "package.json"))
		if err != nil {
			return nil, err
		}
		if m.Name == "" {
			continue
		}
		if other, ok := ws.members[m.Name]; ok {
			return nil, vxerr.Usagef("two workspace packages are named %q: %s and %s", m.Name, other.dir, dir)
		}
		ws.members[m.Name] = &pkg{name: m.Name, dir: dir, man: m}
	}
	return ws, nil
}

// readManifest reads one package.json.
func readManifest(file string) (*manifest, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	return &m, nil
}

// workspaceGlobs answers pnpm-workspace.yaml's packages where that file exists, else the root
// package.json's workspaces (a list, or an object holding packages).
func workspaceGlobs(root string, man *manifest) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(root, "pnpm-workspace.yaml"))
	if err == nil {
		var doc struct {
			Packages []string `yaml:"packages"`
		}
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("read pnpm-workspace.yaml: %w", err)
		}
		return doc.Packages, nil
	}
	if len(man.Workspaces) == 0 {
		return nil, vxerr.Usagef("package.json at %s declares no workspaces, and there is no pnpm-workspace.yaml", root)
	}
	var list []string
	if json.Unmarshal(man.Workspaces, &list) == nil {
		return list, nil
	}
	var obj struct {
		Packages []string `json:"packages"`
	}
	if err := json.Unmarshal(man.Workspaces, &obj); err != nil {
		return nil, fmt.Errorf("read package.json workspaces: %w", err)
	}
	return obj.Packages, nil
}

// matchDirs answers the folders, sorted, that the globs match and that hold a package.json; a
// glob starting with ! excludes. node_modules is never searched.
func matchDirs(root string, globs []string) ([]string, error) {
	fsys := os.DirFS(root)
	found := map[string]bool{}
	var exclude []string
	for _, g := range globs {
		if strings.HasPrefix(g, "!") {
			exclude = append(exclude, path.Clean(strings.TrimPrefix(g, "!")))
			continue
		}
		g = path.Clean(strings.TrimPrefix(g, "./"))
		matches, err := globDirs(fsys, g)
		if err != nil {
			return nil, fmt.Errorf("match workspace glob %q: %w", g, err)
		}
		for _, m := range matches {
			found[m] = true
		}
	}
	var dirs []string
	for d := range found {
		excluded := false
		for _, x := range exclude {
			if ok, _ := doublestar.Match(x, d); ok {
				excluded = true
			}
		}
		if !excluded && d != "." {
			dirs = append(dirs, d)
		}
	}
	sort.Strings(dirs)
	return dirs, nil
}

// globDirs matches g against folders holding a package.json, outside node_modules.
func globDirs(fsys fs.FS, g string) ([]string, error) {
	files, err := doublestar.Glob(fsys, path.Join(g, "package.json"), doublestar.WithNoFollow())
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, f := range files {
		if strings.Contains("/"+f, "/node_modules/") {
			continue
		}
		dirs = append(dirs, path.Dir(f))
	}
	return dirs, nil
}

// closure answers the named packages and every workspace package they or the root depend on,
// transitively (devDependencies too unless production), sorted by folder. An unknown name is
// refused.
func (ws *pmWorkspace) closure(names []string, production bool) ([]*pkg, error) {
	seen := map[string]*pkg{}
	var queue []*pkg
	for _, n := range names {
		p, ok := ws.members[n]
		if !ok {
			return nil, ws.unknown(n)
		}
		if seen[n] == nil {
			seen[n] = p
			queue = append(queue, p)
		}
	}
	// The root's importer is always kept, so the workspace packages it depends on are too.
	for dep, spec := range ws.root.deps(production) {
		if q, ok := ws.members[dep]; ok && seen[dep] == nil && localSpec(spec) {
			seen[dep] = q
			queue = append(queue, q)
		}
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for dep, spec := range p.deps(production) {
			q, ok := ws.members[dep]
			if !ok || seen[dep] != nil || !localSpec(spec) {
				continue
			}
			seen[dep] = q
			queue = append(queue, q)
		}
	}
	kept := make([]*pkg, 0, len(seen))
	for _, p := range seen {
		kept = append(kept, p)
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].dir < kept[j].dir })
	return kept, nil
}

// localSpec reports whether a range names the workspace package of that name rather than
// another source (an npm: alias, a git URL, a tarball).
func localSpec(spec string) bool {
	for _, p := range []string{"npm:", "git", "http:", "https:", "github:", "file:", "link:", "portal:", "patch:"} {
		if strings.HasPrefix(spec, p) {
			return false
		}
	}
	return true
}

// unknown is the refusal of a project name no workspace package has.
func (ws *pmWorkspace) unknown(name string) error {
	var known []string
	for n := range ws.members {
		known = append(known, n)
	}
	sort.Strings(known)
	msg := fmt.Sprintf("no workspace package is named %q", name)
	if near, ok := suggest.Closest(name, known); ok {
		msg += fmt.Sprintf(" (did you mean %s?)", near)
	}
	return vxerr.Usagef("%s", msg)
}
