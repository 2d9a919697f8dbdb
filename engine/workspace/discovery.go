package workspace

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/sourcegraph/conc/iter"

	"github.com/vzn/vx/engine/config"
	"github.com/vzn/vx/engine/vxerr"
)

// Finding the project folders: the projects globs, their package.json files and vx.project.ts.

// packageJSON is what vx reads of a project's package.json.
type packageJSON struct {
	Name                 string            `json:"name"`
	Workspaces           json.RawMessage   `json:"workspaces"`
	Dependencies         map[string]string `json:"dependencies"`
	DevDependencies      map[string]string `json:"devDependencies"`
	PeerDependencies     map[string]string `json:"peerDependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	Scripts              map[string]string `json:"scripts"`
}

// projectDir is a project folder found by the workspace's globs, before its config is read.
type projectDir struct {
	rel      string // slash path relative to the root
	pkg      *packageJSON
	pkgFile  string // relative, "" when none
	confFile string // relative vx.project.ts, "" when none
}

// projectGlobs reads `projects`, defaulting to package.json workspaces.
func (b *build) projectGlobs(r reader, top map[string]any) ([]string, error) {
	if v, ok := top["projects"]; ok {
		return r.strings("projects", v)
	}
	b.watched = append(b.watched, filepath.Join(b.root, "package.json"))
	pkg, _, err := b.readPackageJSON(".")
	if err != nil || pkg == nil || len(pkg.Workspaces) == 0 {
		return nil, err
	}
	var list []string
	if json.Unmarshal(pkg.Workspaces, &list) == nil {
		return list, nil
	}
	var obj struct {
		Packages []string `json:"packages"`
	}
	if err := json.Unmarshal(pkg.Workspaces, &obj); err != nil {
		return nil, &vxerr.ConfigError{File: "package.json", Msg: "workspaces must be a list of globs or { packages: [...] }"}
	}
	return obj.Packages, nil
}

// findProjects expands the project globs into project folders, sorted; a glob starting with !
// excludes what it matches. node_modules and dot folders never hold projects.
func (b *build) findProjects(globs []string) ([]*projectDir, error) {
	fsys := os.DirFS(b.root)
	found := map[string]bool{}
	var excludes []string
	for _, g := range globs {
		if strings.HasPrefix(g, "!") {
			excludes = append(excludes, path.Clean(strings.TrimPrefix(g, "!")))
			continue
		}
		g = path.Clean(strings.TrimPrefix(g, "./"))
		if b.dataOnly && (strings.ContainsAny(g, "{}") || strings.Contains(g, "**")) {
			// Alternatives multiply, and ** walks whatever is below: only a child's deadline bounds
			// those searches.
			return nil, config.ErrNotData
		}
		if !doublestar.ValidatePattern(g) || strings.HasPrefix(g, "../") {
			return nil, &vxerr.ConfigError{File: ConfigFileName, Msg: fmt.Sprintf("projects: %q is not a glob of folders inside the workspace", g)}
		}
		if base, _ := doublestar.SplitPattern(g); base != "." {
			b.watched = append(b.watched, filepath.Join(b.root, filepath.FromSlash(base)))
		} else {
			b.watched = append(b.watched, b.root)
		}
		dirs, err := doublestar.Glob(fsys, g, doublestar.WithNoFollow())
		if err != nil {
			return nil, fmt.Errorf("expand projects glob %q: %w", g, err)
		}
		for _, d := range dirs {
			if skipDir(d) {
				continue
			}
			if fi, err := os.Stat(filepath.Join(b.root, filepath.FromSlash(d))); err == nil && fi.IsDir() {
				found[d] = true
			}
		}
	}
	var rels []string
	for d := range found {
		excluded := false
		for _, x := range excludes {
			if ok, _ := doublestar.Match(x, d); ok {
				excluded = true
			}
		}
		if !excluded {
			rels = append(rels, d)
		}
	}
	sort.Strings(rels)
	// Reading hundreds of small files is syscall-bound: read them in parallel.
	out, err := iter.MapErr(rels, func(rel *string) (*projectDir, error) {
		pd := &projectDir{rel: *rel}
		pkg, pkgFile, err := b.readPackageJSON(*rel)
		if err != nil {
			return nil, err
		}
		pd.pkg, pd.pkgFile = pkg, pkgFile
		conf := path.Join(*rel, ProjectConfigFileName)
		if _, err := os.Stat(filepath.Join(b.root, filepath.FromSlash(conf))); err == nil {
			pd.confFile = conf
		}
		return pd, nil
	})
	if err != nil {
		return nil, err
	}
	for _, pd := range out {
		b.watched = append(b.watched,
			filepath.Join(b.root, filepath.FromSlash(path.Join(pd.rel, "package.json"))),
			filepath.Join(b.root, filepath.FromSlash(path.Join(pd.rel, ProjectConfigFileName))))
	}
	return out, nil
}

func skipDir(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if part == "node_modules" || (strings.HasPrefix(part, ".") && part != ".") {
			return true
		}
	}
	return false
}

// readPackageJSON reads rel/package.json; a missing file is nil, a broken one an error naming it.
// A data-only build answers config.ErrNotData for one past its bounds.
func (b *build) readPackageJSON(rel string) (*packageJSON, string, error) {
	file := path.Join(rel, "package.json")
	data, err := b.readBounded(filepath.Join(b.root, filepath.FromSlash(file)))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, "", nil
		}
		return nil, "", fmt.Errorf("read %s: %w", file, err)
	}
	var pkg packageJSON
	if err := json.Unmarshal(data, &pkg); err != nil {
		return nil, "", &vxerr.ConfigError{File: file, Msg: fmt.Sprintf("not valid JSON: %v", err)}
	}
	return &pkg, file, nil
}

func depNames(pkg *packageJSON) []string {
	var names []string
	for _, m := range []map[string]string{pkg.Dependencies, pkg.DevDependencies, pkg.PeerDependencies, pkg.OptionalDependencies} {
		for n := range m {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}
