package deploysubset

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// pnpmLock is pnpm-lock.yaml read for pruning, as a YAML tree so that what pruning does not
// touch is written back as it was.
type pnpmLock struct {
	top       *yaml.Node // the document's mapping
	v9        bool       // lockfileVersion 9: packages and snapshots apart, keys without "/"
	packages  *yaml.Node
	snapshots *yaml.Node // v9 only
	keep      map[string]bool
}

// prunePnpm prunes a pnpm-lock.yaml (lockfileVersion 6 to 9) to the kept importers and every
// package they resolve.
func prunePnpm(data []byte, ws *pmWorkspace, kept []*pkg, production bool) (*prunedLock, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, refuse("pnpm-lock.yaml", "%v", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, refuse("pnpm-lock.yaml", "not a YAML mapping")
	}
	l := &pnpmLock{top: doc.Content[0], keep: map[string]bool{}}
	version := scalar(mapGet(l.top, "lockfileVersion"))
	switch {
	case strings.HasPrefix(version, "9."):
		l.v9 = true
	case strings.HasPrefix(version, "6."), strings.HasPrefix(version, "7."), strings.HasPrefix(version, "8."):
	default:
		return nil, refuse("pnpm-lock.yaml", "lockfileVersion %q (vx prunes 6.0 to 9.0; pnpm 8 or later writes one)", version)
	}
	importers := mapGet(l.top, "importers")
	if importers == nil {
		return nil, refuse("pnpm-lock.yaml", "it has no importers (a workspace's lockfile has one per package)")
	}
	l.packages, l.snapshots = mapGet(l.top, "packages"), mapGet(l.top, "snapshots")
	if err := l.pruneImporters(importers, ws, kept, production); err != nil {
		return nil, err
	}
	res := &prunedLock{}
	res.total, res.kept = l.prunePackages()
	files, err := l.prunePatches()
	if err != nil {
		return nil, err
	}
	res.files = files
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("write pnpm-lock.yaml: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("write pnpm-lock.yaml: %w", err)
	}
	res.data = b.Bytes()
	return res, nil
}

// pruneImporters keeps the root's and the kept packages' importers (without devDependencies in
// production) and walks what they resolve.
func (l *pnpmLock) pruneImporters(importers *yaml.Node, ws *pmWorkspace, kept []*pkg, production bool) error {
	want := map[string]*pkg{".": ws.root}
	for _, p := range kept {
		want[p.dir] = p
	}
	autoPeers := scalar(mapGet(mapGet(l.top, "settings"), "autoInstallPeers")) != "false"
	var content []*yaml.Node
	for i := 0; i+1 < len(importers.Content); i += 2 {
		dir, imp := importers.Content[i].Value, importers.Content[i+1]
		if want[dir] == nil {
			continue
		}
		if production {
			dropDevImporter(imp, want[dir].man, autoPeers)
		}
		content = append(content, importers.Content[i], imp)
		for _, section := range []string{"dependencies", "optionalDependencies", "devDependencies"} {
			deps := mapGet(imp, section)
			for j := 0; deps != nil && j+1 < len(deps.Content); j += 2 {
				ref := deps.Content[j+1]
				if ref.Kind == yaml.MappingNode { // {specifier, version}
					ref = mapGet(ref, "version")
				}
				l.reach(deps.Content[j].Value, scalar(ref))
			}
		}
	}
	importers.Content = content
	return nil
}

// dropDevImporter removes an importer's devDependencies for a production install. Where pnpm
// installs peers itself (autoInstallPeers), a devDependency that is also one of the package's
// peers becomes a dependency with the peer's range as its specifier, as pnpm resolves it once
// the manifest has no devDependencies.
func dropDevImporter(imp *yaml.Node, man *manifest, autoPeers bool) {
	dev := mapGet(imp, "devDependencies")
	mapDelete(imp, "devDependencies")
	for j := 0; autoPeers && dev != nil && j+1 < len(dev.Content); j += 2 {
		name, entry := dev.Content[j], dev.Content[j+1]
		peer, ok := man.PeerDependencies[name.Value]
		if !ok || man.Dependencies[name.Value] != "" || man.OptionalDependencies[name.Value] != "" {
			continue
		}
		if spec := mapGet(entry, "specifier"); spec != nil {
			spec.Value, spec.Style, spec.Tag = peer, 0, ""
		}
		deps := mapGet(imp, "dependencies")
		if deps == nil {
			deps = &yaml.Node{Kind: yaml.MappingNode}
			imp.Content = append([]*yaml.Node{{Kind: yaml.ScalarNode, Value: "dependencies"}, deps}, imp.Content...)
		}
		at := len(deps.Content)
		for k := 0; k+1 < len(deps.Content); k += 2 {
			if deps.Content[k].Value > name.Value {
				at = k
				break
			}
		}
		deps.Content = append(deps.Content[:at], append([]*yaml.Node{name, entry}, deps.Content[at:]...)...)
	}
}

// refKey answers the packages (v6) or snapshots (v9) key a dependency's resolved reference
// names, or "" for a link to a workspace folder.
func (l *pnpmLock) refKey(name, ref string) string {
	if ref == "" || strings.HasPrefix(ref, "link:") {
		return ""
	}
	if l.v9 {
		base, _, _ := strings.Cut(ref, "(")
		if i := strings.LastIndex(base, "@"); i > 0 { // an alias: the reference is the key
			return ref
		}
		return name + "@" + ref
	}
	if strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, "file:") || strings.Contains(ref, ":") {
		return ref
	}
	return "/" + name + "@" + ref
}

// reach marks the package a reference names and, transitively, what it depends on.
func (l *pnpmLock) reach(name, ref string) {
	queue := []string{l.refKey(name, ref)}
	for len(queue) > 0 {
		key := queue[0]
		queue = queue[1:]
		if key == "" || l.keep[key] {
			continue
		}
		l.keep[key] = true
		node := mapGet(l.packages, key)
		if l.v9 {
			node = mapGet(l.snapshots, key)
			base, _, _ := strings.Cut(key, "(")
			l.keep[base] = true
		}
		for _, section := range []string{"dependencies", "optionalDependencies"} {
			deps := mapGet(node, section)
			for j := 0; deps != nil && j+1 < len(deps.Content); j += 2 {
				queue = append(queue, l.refKey(deps.Content[j].Value, deps.Content[j+1].Value))
			}
		}
	}
}

// prunePackages drops the packages (and v9 snapshots) no kept importer reaches, and answers how
// many package entries there were and are kept.
func (l *pnpmLock) prunePackages() (total, kept int) {
	for _, n := range []*yaml.Node{l.packages, l.snapshots} {
		if n == nil {
			continue
		}
		var content []*yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n == l.packages {
				total++
			}
			if l.keep[n.Content[i].Value] {
				content = append(content, n.Content[i], n.Content[i+1])
				if n == l.packages {
					kept++
				}
			}
		}
		n.Content = content
	}
	if t := mapGet(l.top, "time"); t != nil {
		var content []*yaml.Node
		for i := 0; i+1 < len(t.Content); i += 2 {
			if l.keep[t.Content[i].Value] {
				content = append(content, t.Content[i], t.Content[i+1])
			}
		}
		t.Content = content
	}
	return total, kept
}

// prunePatches answers the patch files the lockfile's patchedDependencies name. Every entry is
// kept: pnpm compares them with the workspace's configuration, which the prune copies whole.
func (l *pnpmLock) prunePatches() ([]string, error) {
	patches := mapGet(l.top, "patchedDependencies")
	var files []string
	for i := 0; patches != nil && i+1 < len(patches.Content); i += 2 {
		if p := scalar(mapGet(patches.Content[i+1], "path")); p != "" {
			files = append(files, p)
		}
	}
	return files, nil
}

// mapGet answers the value of key in a YAML mapping, or nil.
func mapGet(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// mapDelete removes key from a YAML mapping.
func mapDelete(m *yaml.Node, key string) {
	if m == nil {
		return
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i:i], m.Content[i+2:]...)
			return
		}
	}
}

// scalar answers a scalar node's value, or "".
func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}
