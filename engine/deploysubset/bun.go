package deploysubset

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// bunLock is what pruning reads of bun.lock (JSON with trailing commas).
type bunLock struct {
	Workspaces map[string]bunWorkspace      `json:"workspaces"`
	Packages   map[string][]json.RawMessage `json:"packages"`
}

// bunWorkspace is one workspace entry of bun.lock.
type bunWorkspace struct {
	Name                 string            `json:"name"`
	Dependencies         map[string]string `json:"dependencies"`
	DevDependencies      map[string]string `json:"devDependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	PeerDependencies     map[string]string `json:"peerDependencies"`
}

// bunInfo is the metadata object of a package entry.
type bunInfo struct {
	Dependencies         map[string]string `json:"dependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	PeerDependencies     map[string]string `json:"peerDependencies"`
	OptionalPeers        []string          `json:"optionalPeers"`
}

// needs answers the names a package's install needs: its dependencies, optional ones and peers
// but the optional peers, which bun installs only where something else depends on them.
func (i *bunInfo) needs() []string {
	var names []string
	for _, m := range []map[string]string{i.Dependencies, i.OptionalDependencies} {
		for n := range m {
			names = append(names, n)
		}
	}
	for n := range i.PeerDependencies {
		if !slices.Contains(i.OptionalPeers, n) {
			names = append(names, n)
		}
	}
	return names
}

var (
	bunEntryStart = regexp.MustCompile(`^    "((?:[^"\\]|\\.)*)": `)
	bunDevStart   = regexp.MustCompile(`^      "devDependencies": \{$`)
	bunBlockEnd   = regexp.MustCompile(`^    \},?$`)
	bunDevEnd     = regexp.MustCompile(`^      \},?$`)
)

// pruneBun prunes a text bun.lock to the kept workspaces and the packages they resolve, writing
// it line for line as bun does: the removed workspaces' blocks and packages' lines left out.
func pruneBun(data []byte, ws *pmWorkspace, kept []*pkg, production bool) (*prunedLock, error) {
	var l bunLock
	if err := json.Unmarshal(stripTrailingCommas(data), &l); err != nil {
		return nil, refuse("bun.lock", "%v", err)
	}
	if l.Workspaces == nil || l.Packages == nil {
		return nil, refuse("bun.lock", "it has no workspaces or packages")
	}
	keepWS := map[string]bool{}
	keep := map[string]bool{}
	var queue []string
	for _, p := range append([]*pkg{ws.root}, kept...) {
		dir := npmPath(p.dir)
		w, ok := l.Workspaces[dir]
		if !ok {
			return nil, refuse("bun.lock", "it has no workspace %q: run bun install", p.dir)
		}
		keepWS[dir] = true
		if dir != "" {
			keep[w.Name] = l.Packages[w.Name] != nil
		}
		for _, m := range []map[string]string{w.Dependencies, w.OptionalDependencies, w.PeerDependencies, devUnless(w.DevDependencies, production)} {
			for name := range m {
				if dir != "" && l.Packages[w.Name+"/"+name] != nil {
					queue = append(queue, w.Name+"/"+name)
				} else {
					queue = append(queue, name)
				}
			}
		}
	}
	for len(queue) > 0 {
		key := queue[0]
		queue = queue[1:]
		if keep[key] || l.Packages[key] == nil {
			continue
		}
		keep[key] = true
		for _, raw := range l.Packages[key] {
			var info bunInfo
			if json.Unmarshal(raw, &info) != nil {
				continue
			}
			for _, name := range info.needs() {
				if found := l.resolve(key, name); found != "" {
					queue = append(queue, found)
				}
			}
		}
	}
	res := &prunedLock{}
	for k, entry := range l.Packages {
		if len(entry) > 0 && bytes.Contains(entry[0], []byte("@workspace:")) {
			continue // a workspace's link, not an installed package
		}
		res.total++
		if keep[k] {
			res.kept++
		}
	}
	res.data = writeBun(data, keepWS, keep, production)
	return res, nil
}

// devUnless answers dev, or nothing in production.
func devUnless(dev map[string]string, production bool) map[string]string {
	if production {
		return nil
	}
	return dev
}

// resolve answers the package key bun installs name at for the package at key: nested under it,
// then under each package above it, then hoisted; "" when none.
func (l *bunLock) resolve(key, name string) string {
	parts := bunKeyParts(key)
	for n := len(parts); n >= 0; n-- {
		cand := strings.Join(append(append([]string{}, parts[:n]...), name), "/")
		if l.Packages[cand] != nil {
			return cand
		}
	}
	return ""
}

// bunKeyParts splits a package key ("a/@s/b/c") into its package names.
func bunKeyParts(key string) []string {
	segs := strings.Split(key, "/")
	var parts []string
	for i := 0; i < len(segs); i++ {
		if strings.HasPrefix(segs[i], "@") && i+1 < len(segs) {
			parts = append(parts, segs[i]+"/"+segs[i+1])
			i++
			continue
		}
		parts = append(parts, segs[i])
	}
	return parts
}

// writeBun writes bun.lock's text without the removed workspaces' blocks, the removed packages'
// lines and, in production, the kept workspaces' devDependencies.
func writeBun(data []byte, keepWS, keep map[string]bool, production bool) []byte {
	lines := strings.Split(string(data), "\n")
	var out []string
	section := ""
	skipBlock, skipDev := false, false
	var pkgLines []string
	for _, line := range lines {
		switch {
		case line == `  "workspaces": {`:
			section = "workspaces"
		case line == `  "packages": {`:
			section = "packages"
			out = append(out, line)
			continue
		case strings.HasPrefix(line, "  }"):
			if section == "packages" {
				out = append(out, strings.Join(pkgLines, "\n\n"))
			}
			section = ""
		}
		switch section {
		case "workspaces":
			if m := bunEntryStart.FindStringSubmatch(line); m != nil && strings.HasSuffix(line, "{") {
				skipBlock = !keepWS[unquote(`"`+m[1]+`"`)]
			}
			if skipBlock {
				if bunBlockEnd.MatchString(line) {
					skipBlock = false
				}
				continue
			}
			if production && bunDevStart.MatchString(line) {
				skipDev = true
			}
			if skipDev {
				skipDev = !bunDevEnd.MatchString(line)
				continue
			}
		case "packages":
			if m := bunEntryStart.FindStringSubmatch(line); m != nil && keep[unquote(`"`+m[1]+`"`)] {
				pkgLines = append(pkgLines, line)
			}
			continue
		}
		out = append(out, line)
	}
	return []byte(strings.Join(out, "\n"))
}

// stripTrailingCommas turns bun.lock's JSON with trailing commas into JSON.
func stripTrailingCommas(data []byte) []byte {
	var out bytes.Buffer
	inString, escaped := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			out.WriteByte(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
		}
		if c == ',' {
			j := i + 1
			for j < len(data) && (data[j] == ' ' || data[j] == '\n' || data[j] == '\r' || data[j] == '\t') {
				j++
			}
			if j < len(data) && (data[j] == '}' || data[j] == ']') {
				continue
			}
		}
		out.WriteByte(c)
	}
	return out.Bytes()
}
