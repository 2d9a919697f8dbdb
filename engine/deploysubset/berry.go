package deploysubset

import (
	"bytes"
	"net/url"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// berryBlock is one entry of a Yarn berry lockfile: its descriptors and its lines.
type berryBlock struct {
	descs []string // unquoted "name@protocol:range"
	lines []string // the lines after the key
	deps  map[string]string
	used  map[string]bool
}

// pruneBerry prunes a Yarn berry lockfile to the kept workspaces' entries and what they resolve.
// Yarn compares the lockfile it would write with the file byte for byte under --immutable, so
// the entries are written as Yarn writes them: only the descriptors still asked for, each key's
// descriptors sorted, the entries sorted by key.
func pruneBerry(data []byte, ws *pmWorkspace, kept []*pkg, production bool) (*prunedLock, error) {
	header, meta, blocks, err := readBerry(data)
	if err != nil {
		return nil, err
	}
	byDesc := map[string]*berryBlock{}
	builtin := map[string][]string{} // a descriptor → the builtin patches Yarn wraps it in
	for _, b := range blocks {
		for _, d := range b.descs {
			byDesc[d] = b
			if _, rng, ok := strings.Cut(d, "@patch:"); ok && strings.Contains(rng, "builtin<") {
				inner := patchInner("patch:" + rng)
				builtin[inner] = append(builtin[inner], d)
			}
		}
	}
	var queue []string
	for _, p := range append([]*pkg{ws.root}, kept...) {
		d := p.name + "@workspace:" + p.dir
		b := byDesc[d]
		if b == nil {
			return nil, refuse("yarn.lock", "it has no entry for the workspace %s (%s): run yarn install", p.name, d)
		}
		if production {
			b.dropDev(p)
		}
		queue = append(queue, d)
	}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		b := byDesc[d]
		if b == nil || b.used[d] {
			continue
		}
		b.used[d] = true
		// Yarn resolves fsevents, resolve and typescript through its builtin compatibility
		// patches, whose entries the dependency's own range does not name.
		queue = append(queue, builtin[d]...)
		for name, rng := range b.deps {
			queue = append(queue, name+"@"+rng)
			if inner := patchInner(rng); inner != "" {
				queue = append(queue, inner)
			}
		}
	}
	type out struct {
		key   string
		block *berryBlock
	}
	var kept2 []out
	res := &prunedLock{}
	for _, b := range blocks {
		if !isWorkspaceBlock(b) {
			res.total++
		}
		var descs []string
		for _, d := range b.descs {
			if b.used[d] {
				descs = append(descs, d)
			}
		}
		if len(descs) == 0 {
			continue
		}
		if !isWorkspaceBlock(b) {
			res.kept++
		}
		sort.Strings(descs)
		kept2 = append(kept2, out{strings.Join(descs, ", "), b})
	}
	sort.SliceStable(kept2, func(i, j int) bool { return kept2[i].key < kept2[j].key })
	var w bytes.Buffer
	w.WriteString(header)
	w.WriteString(meta)
	for _, o := range kept2 {
		w.WriteString("\n" + jsonString(o.key) + ":\n")
		for _, l := range o.block.lines {
			w.WriteString(l + "\n")
		}
	}
	res.data = w.Bytes()
	return res, nil
}

// isWorkspaceBlock reports whether an entry is a workspace's own.
func isWorkspaceBlock(b *berryBlock) bool {
	for _, d := range b.descs {
		if strings.Contains(d, "@workspace:") {
			return true
		}
	}
	return false
}

// patchInner answers the descriptor a patch: range patches ("" for another range), which the
// lockfile holds an entry for too.
func patchInner(rng string) string {
	rest, ok := strings.CutPrefix(rng, "patch:")
	if !ok {
		return ""
	}
	inner, _, _ := strings.Cut(rest, "#")
	dec, err := url.PathUnescape(inner)
	if err != nil {
		return ""
	}
	return dec
}

// dropDev removes from a workspace entry's dependencies the names its manifest has only as
// devDependencies.
func (b *berryBlock) dropDev(p *pkg) {
	prod := map[string]bool{} // what Yarn lists for a workspace: its dependencies, not its peers
	for _, m := range []map[string]string{p.man.Dependencies, p.man.OptionalDependencies} {
		for n := range m {
			prod[n] = true
		}
	}
	var lines []string
	section := ""
	for _, l := range b.lines {
		if !strings.HasPrefix(l, "    ") {
			section = strings.TrimSpace(l)
		} else if section == "dependencies:" {
			name, _, _ := strings.Cut(strings.TrimSpace(l), ": ")
			name = unquote(name)
			if !prod[name] && p.man.DevDependencies[name] != "" {
				delete(b.deps, name)
				continue
			}
		}
		lines = append(lines, l)
	}
	b.lines = lines
}

// readBerry reads a Yarn berry lockfile: its comment header, its __metadata entry (with the blank
// line before it) and its other entries. The entries' descriptors and dependencies are read by the
// YAML parser; their lines are kept as Yarn wrote them, for writing back.
func readBerry(data []byte) (header, meta string, blocks []*berryBlock, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return "", "", nil, refuse("yarn.lock", "%v", err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return "", "", nil, refuse("yarn.lock", "not a YAML mapping")
	}
	text, header, meta, err := berryText(data)
	if err != nil {
		return "", "", nil, err
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		key := top.Content[i].Value
		if key == "__metadata" {
			continue
		}
		lines, ok := text[key]
		if !ok {
			return "", "", nil, refuse("yarn.lock", "entry %q is not written one per block", key)
		}
		b := &berryBlock{descs: strings.Split(key, ", "), lines: lines, deps: map[string]string{}, used: map[string]bool{}}
		deps := mapGet(top.Content[i+1], "dependencies")
		for j := 0; deps != nil && j+1 < len(deps.Content); j += 2 {
			b.deps[deps.Content[j].Value] = deps.Content[j+1].Value
		}
		blocks = append(blocks, b)
	}
	if meta == "" {
		return "", "", nil, refuse("yarn.lock", "it has no __metadata entry")
	}
	return header, meta, blocks, nil
}

// berryText splits a Yarn berry lockfile's text into its comment header, its __metadata entry
// (with the blank line before it) and each other entry's lines after its key, by key.
func berryText(data []byte) (entries map[string][]string, header, meta string, err error) {
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	i := 0
	var h, m strings.Builder
	for ; i < len(lines) && strings.HasPrefix(lines[i], "#"); i++ {
		h.WriteString(lines[i] + "\n")
	}
	entries = map[string][]string{}
	cur := ""
	for ; i < len(lines); i++ {
		l := lines[i]
		switch {
		case l == "":
			cur = ""
		case l == "__metadata:":
			cur = l
			m.WriteString("\n" + l + "\n")
		case cur == "__metadata:":
			m.WriteString(l + "\n")
		case !strings.HasPrefix(l, " "):
			key, ok := strings.CutSuffix(l, ":")
			if !ok {
				return nil, "", "", refuse("yarn.lock", "line %d: %q is not an entry's first line", i+1, l)
			}
			cur = unquote(key)
			entries[cur] = nil
		case cur == "":
			return nil, "", "", refuse("yarn.lock", "line %d is indented outside an entry", i+1)
		default:
			entries[cur] = append(entries[cur], l)
		}
	}
	return entries, h.String(), m.String(), nil
}
