package depversions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// yarnEntry is one resolved package of a yarn classic lockfile, under every descriptor
// ("name@range") that resolved to it.
type yarnEntry struct {
	version              string
	resolved             string
	dependencies         map[string]string
	optionalDependencies map[string]string
}

// isBerry tells a yarn berry lockfile (YAML with a __metadata entry) from a classic one.
func isBerry(data []byte) bool {
	return bytes.HasPrefix(data, []byte("__metadata:")) || bytes.Contains(data, []byte("\n__metadata:"))
}

// parseYarn reads a yarn classic (v1) lockfile. It lists resolved packages only, never the
// projects, so the projects are the workspace's package.json files (the root's and those its
// "workspaces" globs match), whose own ranges find their entries. A range with no entry is a
// workspace package (yarn links those) or a dependency not installed.
func parseYarn(data []byte, base string, fsys fs.FS) (*graph, error) {
	entries, order, err := parseYarnEntries(data)
	if err != nil {
		return nil, err
	}
	projects, err := yarnProjects(fsys, base)
	if err != nil {
		return nil, err
	}

	b := newBuilder(base)
	nodes := make(map[*yarnEntry]int32, len(order))
	for _, e := range order {
		nodes[e] = b.node()
	}
	resolve := func(name, rng string) (edge, bool) {
		e, ok := entries[name+"@"+rng]
		if !ok || localRef(rng) {
			return edge{}, false
		}
		var real string
		version := e.version
		if alias, ok := strings.CutPrefix(rng, "npm:"); ok {
			real, _, _ = splitIdent(alias)
		} else if strings.ContainsAny(rng, "/:") && e.resolved != "" {
			// A git, URL or tarball range: its version does not move with its content; the
			// resolved URL (with its commit or hash) does.
			version = e.resolved
		}
		return b.edge(name, versionText(name, real, version), nodes[e]), true
	}
	for _, e := range order {
		for _, deps := range []map[string]string{e.dependencies, e.optionalDependencies} {
			for name, ref := range deps {
				if d, ok := resolve(name, ref); ok {
					b.depend(nodes[e], d)
				}
			}
		}
	}
	for dir, m := range projects {
		key := b.importer(dir)
		for _, deps := range []map[string]string{m.Dependencies, m.DevDependencies, m.OptionalDependencies, m.PeerDependencies} {
			for name, ref := range deps {
				if d, ok := resolve(name, ref); ok {
					b.direct(key, d)
				}
			}
		}
	}
	return b.done(), nil
}

// parseYarnEntries parses the classic lockfile format: entries at the left margin, each a list of
// descriptors ending with ":", then fields indented by two spaces ("version \"1.0.0\""), and
// dependency maps ("dependencies:") whose lines are indented by four. order lists each entry once,
// in file order.
func parseYarnEntries(data []byte) (entries map[string]*yarnEntry, order []*yarnEntry, err error) {
	entries = map[string]*yarnEntry{}
	var cur *yarnEntry
	var curMap *map[string]string // the dependency map being filled, nil outside one
	lineNo := 0
	for rest := string(data); rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		lineNo++
		line = strings.TrimRight(line, "\r")
		body := strings.TrimLeft(line, " ")
		if body == "" || body[0] == '#' {
			continue
		}
		fail := func(format string, args ...any) error {
			return unparsable("line %d: %s", lineNo, fmt.Sprintf(format, args...))
		}
		switch indent := len(line) - len(body); indent {
		case 0:
			if !strings.HasSuffix(body, ":") {
				return nil, nil, fail("want an entry ending with a colon")
			}
			descriptors, err := yarnDescriptors(body[:len(body)-1])
			if err != nil {
				return nil, nil, fail("%v", err)
			}
			cur, curMap = &yarnEntry{}, nil
			order = append(order, cur)
			for _, d := range descriptors {
				entries[d] = cur
			}
		case 2:
			if cur == nil {
				return nil, nil, fail("a field outside an entry")
			}
			key, value, err := yarnField(body)
			if err != nil {
				return nil, nil, fail("%v", err)
			}
			curMap = nil
			switch key {
			case "dependencies":
				curMap = &cur.dependencies
			case "optionalDependencies":
				curMap = &cur.optionalDependencies
			case "version":
				cur.version = value
			case "resolved":
				cur.resolved = value
			}
			if curMap != nil {
				*curMap = map[string]string{}
			}
		case 4:
			key, value, err := yarnField(body)
			if err != nil {
				return nil, nil, fail("%v", err)
			}
			if curMap != nil {
				(*curMap)[key] = value
			}
		default:
			return nil, nil, fail("unexpected indentation %d", indent)
		}
	}
	if len(order) == 0 && !bytes.Contains(data, []byte("yarn lockfile v1")) {
		return nil, nil, unparsable("no entries and no yarn lockfile v1 header")
	}
	return entries, order, nil
}

// yarnDescriptors splits an entry's head: descriptors separated by ", ", each quoted or not.
func yarnDescriptors(head string) ([]string, error) {
	var out []string
	for head != "" {
		var d string
		var err error
		if d, head, err = yarnToken(head, ","); err != nil {
			return nil, err
		}
		if d == "" {
			return nil, errors.New("empty descriptor")
		}
		out = append(out, d)
		if head == "" {
			break
		}
		if !strings.HasPrefix(head, ", ") {
			return nil, fmt.Errorf("want \", \" between descriptors, have %q", head)
		}
		head = head[2:]
	}
	if len(out) == 0 {
		return nil, errors.New("no descriptors")
	}
	return out, nil
}

// yarnField splits a field line: `key value`, or `key:` opening a map (value "").
func yarnField(body string) (key, value string, err error) {
	if key, rest, err := yarnToken(body, " :"); err != nil {
		return "", "", err
	} else if rest == ":" {
		return key, "", nil
	} else if !strings.HasPrefix(rest, " ") || key == "" {
		return "", "", fmt.Errorf("want `key value`, have %q", body)
	} else {
		value, rest, err = yarnToken(strings.TrimLeft(rest, " "), "")
		if err != nil {
			return "", "", err
		}
		if rest != "" {
			return "", "", fmt.Errorf("unexpected %q after the value", rest)
		}
		return key, value, nil
	}
}

// yarnToken reads a token at the start of s: a JSON string, or bare text up to one of stop (or
// the end). It answers the token and what follows it.
func yarnToken(s, stop string) (token, rest string, err error) {
	if !strings.HasPrefix(s, `"`) {
		i := len(s)
		if stop != "" {
			if j := strings.IndexAny(s, stop); j >= 0 {
				i = j
			}
		}
		return s[:i], s[i:], nil
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			quoted := s[:i+1]
			if !strings.Contains(quoted, `\`) {
				return quoted[1:i], s[i+1:], nil
			}
			if err := json.Unmarshal([]byte(quoted), &token); err != nil {
				return "", "", fmt.Errorf("bad string %s: %w", quoted, err)
			}
			return token, s[i+1:], nil
		}
	}
	return "", "", fmt.Errorf("unterminated string %s", s)
}

// manifest is the part of a package.json yarn classic importers need.
type manifest struct {
	Dependencies         map[string]string `json:"dependencies"`
	DevDependencies      map[string]string `json:"devDependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	PeerDependencies     map[string]string `json:"peerDependencies"`
	// Workspaces is a list of globs, or an object whose "packages" is one.
	Workspaces json.RawMessage `json:"workspaces"`
}

// yarnProjects reads the package.json at base and those of its workspaces, by folder relative to
// base. A missing root package.json answers no projects.
func yarnProjects(fsys fs.FS, base string) (map[string]*manifest, error) {
	root, err := readManifest(fsys, base)
	if err != nil || root == nil {
		return nil, err
	}
	projects := map[string]*manifest{".": root}
	globs, err := workspaceGlobs(root.Workspaces)
	if err != nil {
		return nil, unparsable("%s: %w", path.Join(base, "package.json"), err)
	}
	var include, exclude []string
	for _, g := range globs {
		if neg, ok := strings.CutPrefix(g, "!"); ok {
			exclude = append(exclude, path.Clean(neg))
		} else {
			include = append(include, path.Clean(g))
		}
	}
	for _, g := range include {
		matches, err := doublestar.Glob(fsys, path.Join(base, g))
		if err != nil {
			return nil, unparsable("%s: workspace glob %q: %w", path.Join(base, "package.json"), g, err)
		}
		for _, m := range matches {
			dir := strings.TrimPrefix(m, base+"/")
			if base == "." {
				dir = m
			}
			if _, done := projects[dir]; done || excluded(dir, exclude) {
				continue
			}
			if fi, err := fs.Stat(fsys, m); err != nil || !fi.IsDir() {
				continue // a file the glob matched, or one gone since
			}
			man, err := readManifest(fsys, m)
			if err != nil {
				return nil, err
			}
			if man != nil {
				projects[dir] = man
			}
		}
	}
	return projects, nil
}

func excluded(dir string, exclude []string) bool {
	if dir == "node_modules" || strings.HasPrefix(dir, "node_modules/") || strings.Contains(dir, "/node_modules/") || strings.HasSuffix(dir, "/node_modules") {
		return true
	}
	for _, g := range exclude {
		if ok, _ := doublestar.Match(g, dir); ok {
			return true
		}
	}
	return false
}

// workspaceGlobs reads package.json "workspaces": ["glob", …] or {"packages": ["glob", …]}.
func workspaceGlobs(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var globs []string
	if raw[0] == '[' {
		if err := json.Unmarshal(raw, &globs); err != nil {
			return nil, fmt.Errorf("workspaces: %w", err)
		}
		return globs, nil
	}
	var obj struct {
		Packages []string `json:"packages"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("workspaces: %w", err)
	}
	return obj.Packages, nil
}

// readManifest reads dir/package.json; nil when there is none. A package.json that does not parse
// makes the lockfile unparsable: the projects it names are unknown.
func readManifest(fsys fs.FS, dir string) (*manifest, error) {
	name := path.Join(dir, "package.json")
	data, err := fs.ReadFile(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, unparsable("%s: %w", name, err)
	}
	return &m, nil
}
