package deploysubset

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// npmEntry is what pruning reads of one package-lock.json "packages" entry.
type npmEntry struct {
	Link                 bool              `json:"link"`
	Resolved             string            `json:"resolved"`
	Dependencies         map[string]string `json:"dependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	PeerDependencies     map[string]string `json:"peerDependencies"`
	DevDependencies      map[string]string `json:"devDependencies"`
	PeerDependenciesMeta map[string]struct {
		Optional bool `json:"optional"`
	} `json:"peerDependenciesMeta"`
}

// npmLock is package-lock.json read for pruning: its top-level members in order and its
// "packages" entries by install path ("" the root, "node_modules/x", "apps/web").
type npmLock struct {
	top     []member
	order   []string
	raw     map[string]json.RawMessage
	entries map[string]*npmEntry
	keep    map[string]bool
	version int
	// devOnly holds, in production, each kept workspace package's install path in node_modules
	// and the names only its devDependencies ask for.
	devOnly map[string]map[string]bool
}

// pruneNpm prunes a package-lock.json (lockfileVersion 2 or 3) to the kept workspace packages
// and every installed package they reach.
func pruneNpm(data []byte, ws *pmWorkspace, kept []*pkg, production bool) (*prunedLock, error) {
	l, err := readNpmLock(data)
	if err != nil {
		return nil, err
	}
	l.walk(ws, kept, production)
	if production {
		l.devOnly = map[string]map[string]bool{}
		for _, p := range kept {
			dev := map[string]bool{}
			for n := range p.man.DevDependencies {
				if !installedAs(p.man, n, true) {
					dev[n] = true
				}
			}
			l.devOnly["node_modules/"+p.name] = dev
		}
	}
	out, err := l.write(kept, production)
	if err != nil {
		return nil, err
	}
	res := &prunedLock{data: out}
	for p := range l.entries {
		if strings.Contains(p, "node_modules/") && !l.entries[p].Link {
			res.total++
			if l.keep[p] {
				res.kept++
			}
		}
	}
	return res, nil
}

// readNpmLock reads package-lock.json, refusing a version without "packages" (npm 6's v1).
func readNpmLock(data []byte) (*npmLock, error) {
	top, err := readObject(data)
	if err != nil {
		return nil, refuse("package-lock.json", "%v", err)
	}
	l := &npmLock{top: top, raw: map[string]json.RawMessage{}, entries: map[string]*npmEntry{}, keep: map[string]bool{}}
	var pkgs json.RawMessage
	for _, m := range top {
		switch m.key {
		case "lockfileVersion":
			_ = json.Unmarshal(m.raw, &l.version)
		case "packages":
			pkgs = m.raw
		}
	}
	if l.version < 2 || pkgs == nil {
		return nil, refuse("package-lock.json", "lockfileVersion %d has no \"packages\" (npm 7 or later writes version 2 or 3)", l.version)
	}
	members, err := readObject(pkgs)
	if err != nil {
		return nil, refuse("package-lock.json", "packages: %v", err)
	}
	for _, m := range members {
		var e npmEntry
		if err := json.Unmarshal(m.raw, &e); err != nil {
			return nil, refuse("package-lock.json", "packages[%q]: %v", m.key, err)
		}
		l.order = append(l.order, m.key)
		l.raw[m.key] = m.raw
		l.entries[m.key] = &e
	}
	return l, nil
}

// walk marks every entry the kept packages reach: their own entries, the root's links to them,
// and what each installed package's dependencies resolve to from where it is installed.
func (l *npmLock) walk(ws *pmWorkspace, kept []*pkg, production bool) {
	keptDir := map[string]bool{}
	var queue []string
	for _, p := range append([]*pkg{ws.root}, kept...) {
		dir := npmPath(p.dir)
		keptDir[dir] = true
		l.keep[dir] = true
		queue = append(queue, dir)
	}
	for p, e := range l.entries { // the links to kept workspace packages
		if e.Link && keptDir[e.Resolved] {
			l.keep[p] = true
		}
	}
	for len(queue) > 0 {
		at := queue[0]
		queue = queue[1:]
		e := l.entries[at]
		if e == nil {
			continue
		}
		for name := range npmDeps(e, keptDir[at] && !production) {
			found := l.resolve(at, name)
			if found == "" || l.keep[found] {
				continue
			}
			l.keep[found] = true
			queue = append(queue, found)
			if t := l.entries[found]; t.Link && !l.keep[t.Resolved] {
				l.keep[t.Resolved] = true
				queue = append(queue, t.Resolved)
			}
		}
	}
}

// npmPath is a workspace folder as package-lock.json names it: "" for the root.
func npmPath(dir string) string {
	if dir == "." {
		return ""
	}
	return dir
}

// npmDeps answers the names an entry depends on; dev only for a workspace package's own entry.
// An optional peer is left out: npm installs it only where something else depends on it.
func npmDeps(e *npmEntry, dev bool) map[string]bool {
	names := map[string]bool{}
	for _, m := range []map[string]string{e.Dependencies, e.OptionalDependencies, e.PeerDependencies} {
		for n := range m {
			names[n] = true
		}
	}
	for n := range e.PeerDependencies {
		if e.PeerDependenciesMeta[n].Optional && e.Dependencies[n] == "" && e.OptionalDependencies[n] == "" {
			delete(names, n)
		}
	}
	if dev {
		for n := range e.DevDependencies {
			names[n] = true
		}
	}
	return names
}

// resolve answers the install path Node's resolution finds name at from the package installed
// at from: its own node_modules, then each folder above; "" when none holds it.
func (l *npmLock) resolve(from, name string) string {
	dir := from
	for {
		cand := "node_modules/" + name
		if dir != "" {
			cand = dir + "/" + cand
		}
		if _, ok := l.entries[cand]; ok {
			return cand
		}
		if dir == "" {
			return ""
		}
		dir = path.Dir(dir)
		if dir == "." {
			dir = ""
		}
	}
}

// write answers the pruned lockfile: the same members in order, "packages" holding the kept
// entries, the legacy "dependencies" tree of version 2 pruned alike.
func (l *npmLock) write(kept []*pkg, production bool) ([]byte, error) {
	importers := map[string]bool{"": true}
	for _, p := range kept {
		importers[npmPath(p.dir)] = true
	}
	var pkgs []member
	for _, p := range l.order {
		if !l.keep[p] {
			continue
		}
		raw := l.raw[p]
		if production && importers[p] {
			members, err := readObject(raw)
			if err != nil {
				return nil, err
			}
			if raw, err = writeObject(withoutMember(members, "devDependencies")); err != nil {
				return nil, err
			}
		}
		pkgs = append(pkgs, member{p, raw})
	}
	top := make([]member, 0, len(l.top))
	for _, m := range l.top {
		switch m.key {
		case "packages":
			raw, err := writeObject(pkgs)
			if err != nil {
				return nil, err
			}
			m.raw = raw
		case "dependencies":
			raw, err := l.pruneLegacy(m.raw, "")
			if err != nil {
				return nil, err
			}
			m.raw = raw
		}
		top = append(top, m)
	}
	compact, err := writeObject(top)
	if err != nil {
		return nil, fmt.Errorf("write package-lock.json: %w", err)
	}
	return indentJSON(compact, "  ")
}

// pruneLegacy prunes version 2's "dependencies" tree, whose nesting mirrors node_modules, to the
// kept install paths under prefix.
func (l *npmLock) pruneLegacy(raw json.RawMessage, prefix string) (json.RawMessage, error) {
	members, err := readObject(raw)
	if err != nil {
		return nil, err
	}
	var out []member
	for _, m := range members {
		p := prefix + "node_modules/" + m.key
		if !l.keep[p] {
			continue
		}
		inner, err := readObject(m.raw)
		if err != nil {
			return nil, err
		}
		for i, im := range inner {
			switch {
			case im.key == "dependencies":
				if inner[i].raw, err = l.pruneLegacy(im.raw, p+"/"); err != nil {
					return nil, err
				}
			case im.key == "requires" && l.devOnly[p] != nil:
				if inner[i].raw, err = withoutKeys(im.raw, l.devOnly[p]); err != nil {
					return nil, err
				}
			}
		}
		if m.raw, err = writeObject(inner); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return writeObject(out)
}

// withoutKeys answers a JSON object without the named members.
func withoutKeys(raw json.RawMessage, drop map[string]bool) (json.RawMessage, error) {
	members, err := readObject(raw)
	if err != nil {
		return nil, err
	}
	out := members[:0:0]
	for _, m := range members {
		if !drop[m.key] {
			out = append(out, m)
		}
	}
	return writeObject(out)
}
