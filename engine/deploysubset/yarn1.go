package deploysubset

import (
	"bytes"
	"strconv"
	"strings"
)

// yarn1Block is one entry of a Yarn 1 lockfile: the descriptors its first line lists (as
// written, and unquoted) and its lines.
type yarn1Block struct {
	raw   []string // the descriptors as written, quotes included
	descs []string // the same, unquoted: "name@range"
	lines []string // the entry's lines after the first
	deps  []string // the descriptors of its dependencies and optionalDependencies
}

// pruneYarn1 prunes a Yarn 1 lockfile, which has no entry for workspace packages, to the
// entries the kept packages' manifests reach, each entry listing only the descriptors still
// asked for.
func pruneYarn1(data []byte, ws *pmWorkspace, kept []*pkg, production bool) (*prunedLock, error) {
	header, blocks, err := readYarn1(data)
	if err != nil {
		return nil, err
	}
	byDesc := map[string]*yarn1Block{}
	for _, b := range blocks {
		for _, d := range b.descs {
			byDesc[d] = b
		}
	}
	used := map[string]bool{}
	var queue []string
	for _, p := range append([]*pkg{ws.root}, kept...) {
		for name, spec := range p.deps(production) {
			if _, member := ws.members[name]; member && localSpec(spec) {
				continue
			}
			if _, peer := p.man.PeerDependencies[name]; peer && !installedAs(p.man, name, production) {
				continue // Yarn 1 installs no peer of a workspace package
			}
			queue = append(queue, name+"@"+spec)
		}
	}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		b := byDesc[d]
		if b == nil || used[d] {
			continue
		}
		used[d] = true
		queue = append(queue, b.deps...)
	}
	var out bytes.Buffer
	out.WriteString(header)
	res := &prunedLock{total: len(blocks)}
	for _, b := range blocks {
		var keys []string
		for i, d := range b.descs {
			if used[d] {
				keys = append(keys, b.raw[i])
			}
		}
		if len(keys) == 0 {
			continue
		}
		res.kept++
		out.WriteString("\n" + strings.Join(keys, ", ") + ":\n")
		for _, l := range b.lines {
			out.WriteString(l + "\n")
		}
	}
	res.data = out.Bytes()
	return res, nil
}

// readYarn1 reads a Yarn 1 lockfile: the comment lines before the first entry, and the entries.
func readYarn1(data []byte) (string, []*yarn1Block, error) {
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	var header strings.Builder
	i := 0
	for ; i < len(lines) && (lines[i] == "" || strings.HasPrefix(lines[i], "#")); i++ {
		header.WriteString(lines[i] + "\n")
	}
	h := strings.TrimRight(header.String(), "\n") + "\n\n"
	var blocks []*yarn1Block
	var cur *yarn1Block
	section := ""
	for ; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.TrimSpace(l) == "":
			cur = nil
		case !strings.HasPrefix(l, " "):
			if !strings.HasSuffix(l, ":") {
				return "", nil, refuse("yarn.lock", "line %d: %q is not an entry's first line", i+1, l)
			}
			cur = &yarn1Block{}
			for _, raw := range strings.Split(strings.TrimSuffix(l, ":"), ", ") {
				cur.raw = append(cur.raw, raw)
				cur.descs = append(cur.descs, unquote(raw))
			}
			blocks = append(blocks, cur)
		case cur == nil:
			return "", nil, refuse("yarn.lock", "line %d is indented outside an entry", i+1)
		default:
			cur.lines = append(cur.lines, l)
			trimmed := strings.TrimSpace(l)
			if !strings.HasPrefix(l, "    ") {
				section = strings.TrimSuffix(trimmed, ":")
				continue
			}
			if section == "dependencies" || section == "optionalDependencies" {
				name, rng, ok := splitYarn1Dep(trimmed)
				if !ok {
					return "", nil, refuse("yarn.lock", "line %d: %q is not a dependency", i+1, l)
				}
				cur.deps = append(cur.deps, name+"@"+rng)
			}
		}
	}
	return h, blocks, nil
}

// splitYarn1Dep splits `name "range"` (either may be quoted).
func splitYarn1Dep(s string) (name, rng string, ok bool) {
	if strings.HasPrefix(s, `"`) {
		end := strings.Index(s[1:], `"`)
		if end < 0 {
			return "", "", false
		}
		name, s = s[1:end+1], strings.TrimSpace(s[end+2:])
	} else {
		var found bool
		name, s, found = strings.Cut(s, " ")
		if !found {
			return "", "", false
		}
	}
	return name, unquote(strings.TrimSpace(s)), true
}

// unquote removes the double quotes Yarn writes around a string that needs them.
func unquote(s string) string {
	if strings.HasPrefix(s, `"`) {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return s
}

// installedAs reports whether a manifest installs name itself: as a dependency, an optional one,
// or (unless production) a devDependency.
func installedAs(m *manifest, name string, production bool) bool {
	_, dep := m.Dependencies[name]
	_, opt := m.OptionalDependencies[name]
	_, dev := m.DevDependencies[name]
	return dep || opt || dev && !production
}
