package initplan

import (
	"regexp"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// nxMatchProjects answers the projects a dependsOn entry's `projects` list selects, sorted, as
// Nx's findMatchingProjects selects them: "*" is every project; "tag:T", "name:N" and
// "directory:D" match tags, names and project folders; a pattern without a known label matches a
// name exactly, else (no glob characters) a name holding it as a word of its own — "supabase-js"
// selects "@supabase/supabase-js" but not "supabase-js-workspace" — else names by glob, and
// when no name matches, folders by glob; "!" excludes, and a list that starts by excluding
// starts from every project. ok is false, with the pattern, where vx cannot read one.
func (b *builder) nxMatchProjects(patterns []string) (names []string, bad string, ok bool) {
	if len(patterns) == 0 {
		return []string{}, "", true // Nx reads an empty list as no project, not the task's own
	}
	matched := map[string]bool{}
	if strings.HasPrefix(patterns[0], "!") {
		patterns = append([]string{"*"}, patterns...)
	}
	for _, raw := range patterns {
		if raw == "" || strings.HasPrefix(raw, "nx-cloud:") {
			continue // Nx's references to other workspaces never match
		}
		kind, value, exclude := b.nxParseProjectPattern(raw)
		hits, good := b.nxProjectsMatching(kind, value)
		if !good {
			return nil, raw, false
		}
		for _, name := range hits {
			if exclude {
				delete(matched, name)
			} else {
				matched[name] = true
			}
		}
	}
	names = make([]string, 0, len(matched))
	for name := range matched {
		names = append(names, name)
	}
	slices.Sort(names)
	return names, "", true
}

// nxParseProjectPattern splits a projects pattern as Nx's parseStringPattern does: "!" first
// excludes; a name of a project is a name; else the text before the first colon is the label
// (tag, name or directory) and the rest its value — and an unknown label is dropped too, the
// value alone read unlabeled.
func (b *builder) nxParseProjectPattern(raw string) (kind, value string, exclude bool) {
	value, exclude = strings.CutPrefix(raw, "!")
	if b.nxNames[value] {
		return "name", value, exclude
	}
	label, rest, found := strings.Cut(value, ":")
	if !found {
		return "", value, exclude
	}
	switch label {
	case "tag", "name", "directory":
		return label, rest, exclude
	}
	return "", rest, exclude
}

// nxProjectsMatching answers the projects one pattern of kind ("" for unlabeled) matches.
func (b *builder) nxProjectsMatching(kind, value string) ([]string, bool) {
	if value == "*" {
		return b.nxProjectNames(func(*nxProject) bool { return true }), true
	}
	switch kind {
	case "tag":
		return b.nxProjectNames(func(np *nxProject) bool {
			return slices.Contains(np.tags, value) || nxIsGlob(value) && slices.ContainsFunc(np.tags, func(t string) bool { return nxGlobMatch(value, t) })
		}), true
	case "name":
		return b.nxProjectsByName(value)
	case "directory":
		return b.nxProjectsByFolder(value), true
	}
	names, ok := b.nxProjectsByName(value)
	if !ok || len(names) > 0 {
		return names, ok
	}
	return b.nxProjectsByFolder(value), true
}

// nxProjectsByName matches names: exactly, else as a word of a name (no glob characters), else by
// glob.
func (b *builder) nxProjectsByName(value string) ([]string, bool) {
	if b.nxNames[value] {
		return []string{value}, true
	}
	if nxIsGlob(value) {
		return b.nxProjectNames(func(np *nxProject) bool { return nxGlobMatch(value, np.name) }), true
	}
	// Nx's regular expression (?<![@a-zA-Z0-9-])VALUE(?![@a-zA-Z0-9-]), case-insensitive, with
	// VALUE as written; Go's has no look-around, so each start is tried and its neighbours checked.
	re, err := regexp.Compile("^(?i:" + value + ")")
	if err != nil {
		return nil, false
	}
	return b.nxProjectNames(func(np *nxProject) bool { return nxWordMatch(re, np.name) }), true
}

// nxWordMatch reports whether re (anchored at its start) matches name from a position whose
// neighbours on both sides are no letter, digit, "-" or "@".
func nxWordMatch(re *regexp.Regexp, name string) bool {
	word := func(c byte) bool {
		return c == '@' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	for i := 0; i <= len(name); i++ {
		if i > 0 && word(name[i-1]) {
			continue
		}
		loc := re.FindStringIndex(name[i:])
		if loc == nil {
			continue
		}
		if end := i + loc[1]; end == len(name) || !word(name[end]) {
			return true
		}
	}
	return false
}

// nxProjectsByFolder matches project folders ("." for the root) by glob.
func (b *builder) nxProjectsByFolder(value string) []string {
	return b.nxProjectNames(func(np *nxProject) bool { return nxGlobMatch(value, np.dir) })
}

// nxGlobMatch matches s against a minimatch glob as Nx does (dots included); a pattern equal to s
// matches whatever its characters.
func nxGlobMatch(pattern, s string) bool {
	if pattern == s {
		return true
	}
	ok, _ := doublestar.Match(pattern, s)
	return ok
}

// nxProjectNames answers the names of the Nx projects keep accepts.
func (b *builder) nxProjectNames(keep func(*nxProject) bool) []string {
	var out []string
	for _, np := range b.nxProjects {
		if keep(np) {
			out = append(out, np.name)
		}
	}
	return out
}
