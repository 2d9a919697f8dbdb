// Package pathglob reads the path globs of a task (inputs, outputs, sandbox read and write) and
// of the workspace (globalInputs). A glob is relative to the project folder, or to the workspace
// root when it starts with "//" ("//tsconfig.base.json", "//dist/apps/web/**"); a leading "!"
// excludes what it matches. No glob reaches outside the workspace: ".." that climbs out of the
// folder a glob starts from is refused, and so is an absolute path.
package pathglob

import (
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// RootPrefix starts a glob that names a path from the workspace root.
const RootPrefix = "//"

// Default, among a task's inputs, stands for the default inputs (every file of the project that
// git would show), so that a task can add files to them or take files from them:
// ['$default', '!**/*.md', '//tsconfig.base.json'] — Turborepo's $TURBO_DEFAULT$.
const Default = "$default"

// Glob is one parsed glob.
type Glob struct {
	// Negated is true for a glob written with a leading "!".
	Negated bool
	// Root is true for a glob written from the workspace root ("//…").
	Root bool
	// Pattern is the cleaned pattern, relative to the project folder (or to the root when Root).
	Pattern string
}

// Parse reads one glob; it refuses what Check refuses.
func Parse(g string) (Glob, error) {
	if g == Default {
		return Glob{Pattern: Default}, nil
	}
	var out Glob
	rest := g
	if r, ok := strings.CutPrefix(rest, "!"); ok {
		out.Negated, rest = true, r
	}
	if r, ok := strings.CutPrefix(rest, RootPrefix); ok {
		out.Root, rest = true, r
	} else if strings.HasPrefix(rest, "/") {
		return Glob{}, fmt.Errorf("%q is an absolute path: write a path inside the project, or %q for a path from the workspace root", g, RootPrefix+"path")
	}
	rest = strings.TrimPrefix(rest, "./")
	if rest == "" {
		return Glob{}, fmt.Errorf("%q names no path", g)
	}
	clean := path.Clean(rest)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		if out.Root {
			return Glob{}, fmt.Errorf("%q leaves the workspace", g)
		}
		return Glob{}, fmt.Errorf("%q leaves the project: write %q for a path from the workspace root", g, RootPrefix+"path/from/root")
	}
	if !doublestar.ValidatePattern(clean) {
		return Glob{}, fmt.Errorf("%q is not a valid glob", g)
	}
	// path.Clean drops a trailing "/" that a folder glob may carry; "dist/" means the folder's files.
	if strings.HasSuffix(rest, "/") && clean != "." {
		clean += "/**"
	}
	out.Pattern = clean
	return out, nil
}

// Check reports whether g is a glob vx accepts, with an error naming what is wrong.
func Check(g string) error {
	_, err := Parse(g)
	return err
}

// FromRoot answers the glob as a pattern relative to the workspace root, for a project in dir
// (root-relative slash path, "." for the root).
func (g Glob) FromRoot(dir string) string {
	if g.Root || dir == "." || dir == "" {
		return g.Pattern
	}
	if g.Pattern == "." {
		return dir
	}
	return dir + "/" + g.Pattern
}

// String writes the glob back as declared (cleaned).
func (g Glob) String() string {
	s := g.Pattern
	if g.Root {
		s = RootPrefix + s
	}
	if g.Negated {
		s = "!" + s
	}
	return s
}

// ParseAll parses every glob; the first refusal is the error.
func ParseAll(globs []string) ([]Glob, error) {
	out := make([]Glob, 0, len(globs))
	for _, g := range globs {
		pg, err := Parse(g)
		if err != nil {
			return nil, err
		}
		out = append(out, pg)
	}
	return out, nil
}

// Set is a list of globs resolved against the workspace root for one project: the positive
// patterns match, the negated ones remove.
type Set struct {
	include, exclude []string
	// under holds, for each include pattern of the form DIR/** with a literal DIR, "DIR/": a
	// path under it matches without doublestar (a run matches every input and output against
	// them), "" for the others.
	under []string
	// withDefault is set when the list holds Default.
	withDefault bool
}

// NewSet resolves globs for a project in dir. Globs that do not parse are refused.
func NewSet(dir string, globs []string) (*Set, error) {
	parsed, err := ParseAll(globs)
	if err != nil {
		return nil, err
	}
	s := &Set{}
	for _, g := range parsed {
		if g.Pattern == Default {
			s.withDefault = true
			continue
		}
		if g.Negated {
			s.exclude = append(s.exclude, g.FromRoot(dir))
		} else {
			p := g.FromRoot(dir)
			s.include = append(s.include, p)
			under := ""
			if base, ok := strings.CutSuffix(p, "/**"); ok && base != "" && !strings.ContainsAny(base, "*?[{\\") {
				under = base + "/"
			}
			s.under = append(s.under, under)
		}
	}
	return s, nil
}

// Empty reports whether the set can match nothing.
func (s *Set) Empty() bool { return len(s.include) == 0 && !s.withDefault }

// WithDefault reports whether the list holds Default: the default inputs, less what the negated
// patterns remove, plus what the positive ones match.
func (s *Set) WithDefault() bool { return s.withDefault }

// Excluded reports whether a negated pattern removes the root-relative slash path rel.
func (s *Set) Excluded(rel string) bool {
	for _, p := range s.exclude {
		if ok, _ := doublestar.Match(p, rel); ok {
			return true
		}
	}
	return false
}

// Match reports whether the root-relative slash path rel is matched.
func (s *Set) Match(rel string) bool {
	hit := false
	for i, p := range s.include {
		if u := s.under[i]; u != "" && strings.HasPrefix(rel, u) {
			hit = true
			break
		}
		if ok, _ := doublestar.Match(p, rel); ok {
			hit = true
			break
		}
	}
	return hit && !s.Excluded(rel)
}

// Bases answers the folders (or, for a literal path, the file) under which the set's files can
// lie, root-relative: the fixed leading part of each positive pattern. "." means the whole
// workspace.
func (s *Set) Bases() []string {
	var out []string
	for _, p := range s.include {
		if !strings.ContainsAny(p, "*?[{\\") {
			out = append(out, p) // a literal path is its own base
			continue
		}
		base, _ := doublestar.SplitPattern(p)
		out = append(out, base)
	}
	return out
}
