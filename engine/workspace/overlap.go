package workspace

import (
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/pathglob"
	"github.com/vzn/vx/engine/vxerr"
)

// outputGlob is one include glob of a task's outputs, from the workspace root.
type outputGlob struct {
	task *graph.Task
	// declared is the glob as the task wrote it; pattern the same from the workspace root.
	declared, pattern string
	// prefix is the pattern's literal folder: its segments before the first with a wildcard.
	prefix string
}

// checkExclusiveOutputs refuses two tasks whose outputs can name one file while neither depends
// on the other, directly or through other tasks: which of them wrote the file would depend on
// the order they happened to run in, and a hit of either would restore it over the other's. It
// names both tasks and their overlapping globs. A glob of one task that lies wholly under an
// exclusion of the other (`!dist/types/**`) does not count.
func checkExclusiveOutputs(ws *graph.Workspace) error {
	byPrefix := map[string][]outputGlob{}
	var all []outputGlob
	for _, id := range ws.TaskIDs() {
		t, _ := ws.Task(id)
		p, _ := ws.Project(t.Project)
		for _, g := range t.Outputs {
			pg, err := pathglob.Parse(g)
			if err != nil || pg.Negated {
				continue // a glob that does not parse was refused where it was read
			}
			pat := pg.FromRoot(p.Dir)
			og := outputGlob{task: t, declared: g, pattern: pat, prefix: literalPrefix(pat)}
			byPrefix[og.prefix] = append(byPrefix[og.prefix], og)
			all = append(all, og)
		}
	}
	reach := reachability{ws: ws}
	for _, a := range all {
		// Two globs can match one path only when one's literal folder holds the other's: look
		// at the globs whose folder is a's or one above it.
		for dir := a.prefix; ; dir = parentDir(dir) {
			for _, b := range byPrefix[dir] {
				if err := refuseOverlap(ws, &reach, a, b); err != nil {
					return err
				}
			}
			if dir == "" {
				break
			}
		}
	}
	return nil
}

// refuseOverlap answers the refusal of a and b when they belong to two tasks with no edge
// between them and can match one path that neither task excludes.
func refuseOverlap(ws *graph.Workspace, reach *reachability, a, b outputGlob) error {
	if a.task == b.task || !globsOverlap(a.pattern, b.pattern) {
		return nil
	}
	if excludedBy(a.pattern, b.task, ws) || excludedBy(b.pattern, a.task, ws) {
		return nil
	}
	if reach.reaches(a.task.ID, b.task.ID) || reach.reaches(b.task.ID, a.task.ID) {
		return nil
	}
	first, second := a, b
	if second.task.ID < first.task.ID {
		first, second = second, first
	}
	o := second.task.Origins.Get("outputs")
	return &vxerr.ConfigError{File: o.File, Line: o.Line, Col: o.Col, Msg: fmt.Sprintf(
		"tasks %s and %s both write outputs matching %q (%s) and %q (%s), and neither depends on the other: "+
			"make one depend on the other, or give them outputs apart",
		first.task.ID, second.task.ID, first.declared, first.task.ID, second.declared, second.task.ID)}
}

// excludedBy reports whether every path pattern (from the root) matches lies under an exclusion
// of t's outputs (`!dist/types/**` holds `dist/types/**` and `dist/types/*.d.ts`).
func excludedBy(pattern string, t *graph.Task, ws *graph.Workspace) bool {
	p, _ := ws.Project(t.Project)
	for _, g := range t.Outputs {
		pg, err := pathglob.Parse(g)
		if err != nil || !pg.Negated {
			continue
		}
		base, ok := strings.CutSuffix(pg.FromRoot(p.Dir), "/**")
		if !ok || literalPrefix(base) != base {
			continue
		}
		if pattern == base+"/**" || strings.HasPrefix(literalPrefix(pattern)+"/", base+"/") {
			return true
		}
	}
	return false
}

// reachability answers whether one task depends on another, directly or transitively.
type reachability struct {
	ws   *graph.Workspace
	memo map[string]map[string]bool
}

// reaches reports whether from depends on to.
func (r *reachability) reaches(from, to string) bool {
	if r.memo == nil {
		r.memo = map[string]map[string]bool{}
	}
	seen, ok := r.memo[from]
	if !ok {
		seen = map[string]bool{}
		stack := []string{from}
		for len(stack) > 0 {
			id := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			t, ok := r.ws.Task(id)
			if !ok {
				continue
			}
			for _, d := range t.DependsOn {
				if !seen[d] {
					seen[d] = true
					stack = append(stack, d)
				}
			}
		}
		r.memo[from] = seen
	}
	return seen[to]
}

// literalPrefix answers the segments of pattern before the first that holds a wildcard, joined
// ("" when the first does).
func literalPrefix(pattern string) string {
	segs := strings.Split(pattern, "/")
	n := 0
	for n < len(segs) && !strings.ContainsAny(segs[n], `*?[{\`) {
		n++
	}
	return strings.Join(segs[:n], "/")
}

// parentDir answers the folder above dir, "" above a top folder.
func parentDir(dir string) string {
	if d := path.Dir(dir); d != "." {
		return d
	}
	return ""
}

// globsOverlap reports whether two glob patterns (doublestar syntax, `/` separated) can match
// one path: `**` takes any number of whole segments, and within a segment `*` any run of
// characters, `?` one, `[…]` one of a class; `{a,b}` is each of its alternatives.
func globsOverlap(a, b string) bool {
	for _, x := range expandBraces(a) {
		for _, y := range expandBraces(b) {
			if segmentsOverlap(strings.Split(x, "/"), strings.Split(y, "/")) {
				return true
			}
		}
	}
	return false
}

// segmentsOverlap reports whether two lists of segment patterns can match one list of segments.
func segmentsOverlap(a, b []string) bool {
	type at struct{ i, j int }
	done := map[at]bool{}
	var rec func(i, j int) bool
	rec = func(i, j int) bool {
		if i == len(a) || j == len(b) {
			return allDoubleStar(a[i:]) && allDoubleStar(b[j:])
		}
		if done[at{i, j}] {
			return false // explored already, and it did not match
		}
		done[at{i, j}] = true
		switch {
		case a[i] == "**":
			// It takes no segment, or one more that b's current pattern takes too.
			return rec(i+1, j) || rec(i, j+1)
		case b[j] == "**":
			return rec(i, j+1) || rec(i+1, j)
		}
		return segmentOverlap(a[i], b[j]) && rec(i+1, j+1)
	}
	return rec(0, 0)
}

func allDoubleStar(segs []string) bool {
	for _, s := range segs {
		if s != "**" {
			return false
		}
	}
	return true
}

// segToken is one element of a segment pattern: a literal character, `?`, `*` or a class.
type segToken struct {
	kind  byte // 'c' literal, '?', '*', '['
	lit   rune
	class string // the class as written, "[a-z]"
}

// segmentOverlap reports whether two segment patterns can match one non-empty name.
func segmentOverlap(x, y string) bool {
	a, b := segTokens(x), segTokens(y)
	type at struct{ i, j int }
	done := map[at]bool{}
	var rec func(i, j int) bool
	rec = func(i, j int) bool {
		if i == len(a) || j == len(b) {
			return allStar(a[i:]) && allStar(b[j:])
		}
		if done[at{i, j}] {
			return false
		}
		done[at{i, j}] = true
		switch {
		case a[i].kind == '*':
			return rec(i+1, j) || rec(i, j+1)
		case b[j].kind == '*':
			return rec(i, j+1) || rec(i+1, j)
		}
		return tokensShareChar(a[i], b[j]) && rec(i+1, j+1)
	}
	return rec(0, 0)
}

func allStar(toks []segToken) bool {
	for _, t := range toks {
		if t.kind != '*' {
			return false
		}
	}
	return true
}

// segTokens splits a segment pattern into its tokens; `**` inside a segment is one `*`.
func segTokens(s string) []segToken {
	var out []segToken
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; {
		case r == '\\' && i+1 < len(rs):
			i++
			out = append(out, segToken{kind: 'c', lit: rs[i]})
		case r == '*':
			if len(out) == 0 || out[len(out)-1].kind != '*' {
				out = append(out, segToken{kind: '*'})
			}
		case r == '?':
			out = append(out, segToken{kind: '?'})
		case r == '[':
			end := i + 1
			for end < len(rs) && (rs[end] != ']' || end == i+1) {
				end++
			}
			if end >= len(rs) {
				out = append(out, segToken{kind: 'c', lit: r})
				continue
			}
			out = append(out, segToken{kind: '[', class: string(rs[i : end+1])})
			i = end
		default:
			out = append(out, segToken{kind: 'c', lit: r})
		}
	}
	return out
}

// tokensShareChar reports whether some character matches both single-character tokens.
func tokensShareChar(a, b segToken) bool {
	if a.kind == '?' || b.kind == '?' {
		return true
	}
	if a.kind == 'c' && b.kind == 'c' {
		return a.lit == b.lit
	}
	if a.kind == 'c' {
		return classMatches(b.class, a.lit)
	}
	if b.kind == 'c' {
		return classMatches(a.class, b.lit)
	}
	// Two classes: try every printable ASCII character and every character either names.
	for r := rune(0x20); r < 0x7f; r++ {
		if classMatches(a.class, r) && classMatches(b.class, r) {
			return true
		}
	}
	for _, r := range a.class + b.class {
		if classMatches(a.class, r) && classMatches(b.class, r) {
			return true
		}
	}
	return false
}

func classMatches(class string, r rune) bool {
	ok, _ := doublestar.Match(class, string(r))
	return ok
}

// maxBraceAlternatives bounds the expansion of `{…}`; past it a pattern counts as its braces
// matching anything in their segment, which can only find more overlaps.
const maxBraceAlternatives = 256

// expandBraces answers the patterns `{a,b}` stands for, each alternative written out.
func expandBraces(p string) []string {
	open := strings.IndexByte(p, '{')
	if open < 0 {
		return []string{p}
	}
	depth, closeAt := 0, -1
	var commas []int
	for i := open; i < len(p) && closeAt < 0; i++ {
		switch p[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				closeAt = i
			}
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		}
	}
	if closeAt < 0 {
		return []string{p}
	}
	var alts []string
	from := open + 1
	for _, c := range append(commas, closeAt) {
		alts = append(alts, p[from:c])
		from = c + 1
	}
	var out []string
	for _, alt := range alts {
		for _, rest := range expandBraces(p[:open] + alt + p[closeAt+1:]) {
			if len(out) >= maxBraceAlternatives {
				return []string{p[:open] + "*" + p[closeAt+1:]}
			}
			out = append(out, rest)
		}
	}
	return out
}
