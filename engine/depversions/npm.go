package depversions

import (
	"encoding/json"
	"strings"
)

// npmLock is package-lock.json (and npm-shrinkwrap.json) from lockfileVersion 2 on: "packages"
// maps each install path ("" for the root, "packages/app" for a workspace,
// "node_modules/a/node_modules/b" for a nested copy) to what is installed there.
type npmLock struct {
	LockfileVersion int                   `json:"lockfileVersion"`
	Packages        map[string]npmPackage `json:"packages"`
}

type npmPackage struct {
	// Name is set when it differs from the folder name (an alias) and on workspaces.
	Name     string `json:"name"`
	Version  string `json:"version"`
	Resolved string `json:"resolved"`
	// Link marks node_modules/<name> as a symlink to Resolved (a workspace or file: folder).
	Link                 bool              `json:"link"`
	Dependencies         map[string]string `json:"dependencies"`
	DevDependencies      map[string]string `json:"devDependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	PeerDependencies     map[string]string `json:"peerDependencies"`
}

func parseNpm(data []byte, base string) (*graph, error) {
	var lock npmLock
	if err := json.Unmarshal(data, &lock); err != nil {
		return nil, unparsable("%w", err)
	}
	switch {
	case lock.LockfileVersion == 1:
		return nil, unparsable("lockfileVersion 1 (npm 6) is not supported; npm 7 or later rewrites it as version 3")
	case lock.LockfileVersion != 2 && lock.LockfileVersion != 3:
		return nil, unparsable("unsupported lockfileVersion %d", lock.LockfileVersion)
	case lock.Packages == nil:
		return nil, unparsable(`no "packages" in lockfileVersion %d`, lock.LockfileVersion)
	}

	b := newBuilder(base)
	nodes := map[string]int32{}
	for p, pkg := range lock.Packages {
		if inNodeModules(p) && !pkg.Link {
			nodes[p] = b.node()
		}
	}

	// resolve finds what name resolves to from the package installed at from, as Node does:
	// the nearest node_modules/<name> going up from from's folder. ok is false for a link (a
	// workspace or file: folder) and for a dependency not installed (an optional or peer one).
	resolve := func(from, name string) (e edge, ok bool) {
		for dir := from; ; dir = parentDir(dir) {
			at := "node_modules/" + name
			if dir != "" {
				at = dir + "/" + at
			}
			if pkg, found := lock.Packages[at]; found {
				id, external := nodes[at]
				if !external {
					return edge{}, false
				}
				version := pkg.Version
				if strings.HasPrefix(pkg.Resolved, "git") {
					// A git dependency's version does not move with its commit; the resolved URL does.
					version = pkg.Resolved
				}
				return b.edge(name, versionText(name, pkg.Name, version), id), true
			}
			if dir == "" {
				return edge{}, false
			}
		}
	}
	depend := func(from string, add func(edge), sets ...map[string]string) {
		for _, set := range sets {
			for name := range set {
				if e, ok := resolve(from, name); ok {
					add(e)
				}
			}
		}
	}

	for p, pkg := range lock.Packages {
		if id, ok := nodes[p]; ok {
			depend(p, func(e edge) { b.depend(id, e) }, pkg.Dependencies, pkg.OptionalDependencies, pkg.PeerDependencies)
			continue
		}
		if inNodeModules(p) {
			continue // a link; its target is listed under its own path
		}
		dir := p
		if dir == "" {
			dir = "."
		}
		key := b.importer(dir)
		depend(p, func(e edge) { b.direct(key, e) },
			pkg.Dependencies, pkg.DevDependencies, pkg.OptionalDependencies, pkg.PeerDependencies)
	}
	return b.done(), nil
}

// inNodeModules reports whether an install path is inside a node_modules folder, that is, a
// package npm installed rather than the root, a workspace or a file: folder.
func inNodeModules(p string) bool {
	return strings.HasPrefix(p, "node_modules/") || strings.Contains(p, "/node_modules/")
}

// parentDir answers the folder above p, "" above a top-level one.
func parentDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}
