package depversions

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/tailscale/hujson"
)

// bunLock is bun.lock, the text lockfile of bun 1.2 and later (JSON with trailing commas).
// "workspaces" maps a project folder ("" for the root) to its package.json dependencies;
// "packages" maps an install path to ["name@version", registry, {dependencies…}, integrity]. An
// install path is the hoisted name ("ms"), or for a copy that could not be hoisted the path of
// its dependent ("debug/ms"; a workspace's own copies under its package name: "app/ms").
type bunLock struct {
	LockfileVersion *int                         `json:"lockfileVersion"`
	Workspaces      map[string]bunWorkspace      `json:"workspaces"`
	Packages        map[string][]json.RawMessage `json:"packages"`
}

type bunWorkspace struct {
	Name                 string            `json:"name"`
	Dependencies         map[string]string `json:"dependencies"`
	DevDependencies      map[string]string `json:"devDependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	PeerDependencies     map[string]string `json:"peerDependencies"`
}

// bunMeta is the object in a package's array.
type bunMeta struct {
	Dependencies         map[string]string `json:"dependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	PeerDependencies     map[string]string `json:"peerDependencies"`
}

// bunMaxVersion is the newest lockfileVersion read (bun 1.2 wrote 0 and 1, bun 1.3 writes 2).
const bunMaxVersion = 2

func parseBun(data []byte, base string) (*graph, error) {
	var lock bunLock
	// bun.lock is JSON with trailing commas (JSONC): hujson reads it.
	// (The newline ends a last-line comment, which hujson would take for a cut-off file.)
	clean, err := hujson.Standardize(append(append([]byte(nil), data...), '\n'))
	if err == nil {
		err = json.Unmarshal(clean, &lock)
	}
	switch {
	case err != nil:
		return nil, unparsable("%w", err)
	case lock.LockfileVersion == nil:
		return nil, unparsable("no lockfileVersion")
	case *lock.LockfileVersion < 0 || *lock.LockfileVersion > bunMaxVersion:
		return nil, unparsable("unsupported lockfileVersion %d", *lock.LockfileVersion)
	}

	b := newBuilder(base)
	type bunPackage struct {
		path  []string // the install path's package names
		ident string   // "name@version"
		meta  bunMeta
	}
	pkgs := make(map[string]*bunPackage, len(lock.Packages))
	nodes := map[string]int32{}
	for k, arr := range lock.Packages {
		p := &bunPackage{path: bunPath(k)}
		if len(arr) == 0 || json.Unmarshal(arr[0], &p.ident) != nil {
			return nil, unparsable("package %q: want [\"name@version\", …]", k)
		}
		for _, raw := range arr[1:] {
			if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' {
				if err := json.Unmarshal(t, &p.meta); err != nil {
					return nil, unparsable("package %q: %w", k, err)
				}
				break
			}
		}
		pkgs[k] = p
		if _, version, ok := splitIdent(p.ident); ok && !localRef(version) {
			nodes[k] = b.node()
		}
	}
	// resolve finds what name resolves to from the install path from: the nearest copy going up
	// from from's own nested copies to the hoisted one.
	resolve := func(from []string, name string) (edge, bool) {
		for i := len(from); i >= 0; i-- {
			k := strings.Join(append(from[:i:i], name), "/")
			p, found := pkgs[k]
			if !found {
				continue
			}
			id, external := nodes[k]
			if !external {
				return edge{}, false
			}
			real, version, _ := splitIdent(p.ident)
			return b.edge(name, versionText(name, real, version), id), true
		}
		return edge{}, false
	}
	for k, p := range pkgs {
		id, ok := nodes[k]
		if !ok {
			continue
		}
		for _, deps := range []map[string]string{p.meta.Dependencies, p.meta.OptionalDependencies, p.meta.PeerDependencies} {
			for name := range deps {
				if e, ok := resolve(p.path, name); ok {
					b.depend(id, e)
				}
			}
		}
	}
	for dir, ws := range lock.Workspaces {
		var from []string // the root's dependencies are hoisted
		if dir != "" {
			from = []string{ws.Name}
		} else {
			dir = "."
		}
		key := b.importer(dir)
		for _, deps := range []map[string]string{ws.Dependencies, ws.DevDependencies, ws.OptionalDependencies, ws.PeerDependencies} {
			for name, ref := range deps {
				if localRef(ref) {
					continue
				}
				if e, ok := resolve(from, name); ok {
					b.direct(key, e)
				}
			}
		}
	}
	return b.done(), nil
}

// bunPath splits an install path into package names: "app/@types/node" → [app @types/node].
func bunPath(key string) []string {
	var names []string
	for key != "" {
		n := strings.IndexByte(key, '/')
		if strings.HasPrefix(key, "@") && n >= 0 {
			if m := strings.IndexByte(key[n+1:], '/'); m >= 0 {
				n += 1 + m
			} else {
				n = -1
			}
		}
		if n < 0 {
			names = append(names, key)
			break
		}
		names = append(names, key[:n])
		key = key[n+1:]
	}
	return names
}
