// Package failloc finds the places in a workspace's files that a failed task's output names (a
// compiler error, a failed assertion, a stack frame): getFailures answers them, and a CI run's
// annotations point at them. One parser serves both, so an agent and a reviewer see the same places.
package failloc

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Location is a place in a file that a task's output names: a compiler error, a failed
// assertion, a stack frame.
type Location struct {
	// File is absolute.
	File string `json:"file"`
	// Line and Col are 1-based; absent when the output did not say.
	Line int `json:"line,omitempty"`
	Col  int `json:"col,omitempty"`
}

// MaxLocations bounds the locations answered for one task: past it the output is noise.
const MaxLocations = 50

// The formats Parse reads:
//
//   - `f:line:col` and `f:line` — tsc --pretty, Go, ESLint's unix format, GCC and Clang, Rust's
//     `--> f:line:col`, Vitest's `❯ f:line:col`, and stack frames `at fn (f:line:col)` (Node, Bun,
//     Jest): the file starts the line or follows a space, an opening bracket, a quote, an arrow,
//     `=` or `,`;
//   - `f(line,col)` — tsc without --pretty, MSBuild-style tools;
//   - `File "f", line N` — a Python traceback;
//   - ESLint's default (stylish) format: a line holding only a file, then `  line:col  error …`.
//
// The first three are scanned by hand, not with regular expressions: a log of a chatty test runner
// has thousands of lines, and a regular expression tried at every offset of each was the whole cost
// of getFailures.
var (
	stylishFile = regexp.MustCompile(`^([^\s:]+\.\w+)$`)
	stylishLoc  = regexp.MustCompile(`^\s+(\d+):(\d+)\s+(?:error|warning)\s`)
)

// pathDelim reports whether r ends a path scanned backwards from a `:line` or `(line,col)`.
func pathDelim(r rune) bool {
	switch r {
	case ' ', '\t', '(', ')', '[', ']', '\'', '"', '<', '>', '|', ',', ':', '=', '❯', '›', '→', '`':
		return true
	}
	return false
}

// pathBefore answers the path that ends at line[end] (exclusive), scanning back to a delimiter.
func pathBefore(line string, end int) string {
	start := end
	for start > 0 {
		r, size := utf8.DecodeLastRuneInString(line[:start])
		if pathDelim(r) {
			break
		}
		start -= size
	}
	return line[start:end]
}

// digitsAt answers the decimal number starting at line[i] and the index after it ("" when none).
func digitsAt(line string, i int) (string, int) {
	j := i
	for j < len(line) && line[j] >= '0' && line[j] <= '9' {
		j++
	}
	return line[i:j], j
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// lineLocations calls add with each (file, line, col) the line names, in order, until add answers
// false; it answers false then.
func lineLocations(line string, add func(file, line, col string) bool) bool {
	if i := strings.Index(line, `File "`); i >= 0 {
		rest := line[i+len(`File "`):]
		if q := strings.IndexByte(rest, '"'); q > 0 && strings.HasPrefix(rest[q:], `", line `) {
			if n, _ := digitsAt(rest, q+len(`", line `)); n != "" && !add(rest[:q], n, "") {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == ':' && i+1 < len(line) && line[i+1] >= '0' && line[i+1] <= '9':
			file := pathBefore(line, i)
			ln, j := digitsAt(line, i+1)
			col := ""
			if j+1 < len(line) && line[j] == ':' && line[j+1] >= '0' && line[j+1] <= '9' {
				col, j = digitsAt(line, j+1)
			}
			if j < len(line) && isWordByte(line[j]) {
				continue // 12abc is not a line number
			}
			if file != "" && !add(file, ln, col) {
				return false
			}
			i = j - 1
		case c == '(' && i+1 < len(line) && line[i+1] >= '0' && line[i+1] <= '9':
			file := pathBefore(line, i)
			ln, j := digitsAt(line, i+1)
			if file == "" || j >= len(line) || line[j] != ',' {
				continue
			}
			col, k := digitsAt(line, j+1)
			if col == "" || k >= len(line) || line[k] != ')' {
				continue
			}
			if !add(file, ln, col) {
				return false
			}
			i = k
		}
	}
	return true
}

// Locator finds the locations an output names that are files of the workspace.
type Locator struct {
	// bases are the folders a relative path is tried against, in order: the task's project
	// folder, then the workspace root.
	bases []string
	root  string
	// isFile caches what a path is, so an output naming one file a thousand times stats it once.
	isFile map[string]bool
}

// New returns a Locator for a task of the project in projectDir ("" when unknown) of the
// workspace at root.
func New(root, projectDir string) *Locator {
	l := &Locator{root: filepath.Clean(root), isFile: map[string]bool{}}
	if projectDir != "" {
		l.bases = append(l.bases, filepath.Clean(projectDir))
	}
	if projectDir == "" || filepath.Clean(projectDir) != l.root {
		l.bases = append(l.bases, l.root)
	}
	return l
}

// Finding is a Location and the output line that named it, trimmed: what a CI annotation says.
type Finding struct {
	Location
	Message string
}

// Parse answers the locations text names, in the order it names them, each once, in the
// formats listed above. A file is kept only when it exists inside the workspace root and
// not under node_modules (a frame of a dependency is not a place to fix); a relative path is
// resolved against the project folder, then the workspace root.
func (l *Locator) Parse(text string) []Location {
	found := l.Findings(text)
	out := make([]Location, len(found))
	for i, f := range found {
		out[i] = f.Location
	}
	return out
}

// Findings answers what Parse answers, each location with the line of text that named it.
func (l *Locator) Findings(text string) []Finding {
	out := []Finding{}
	seen := map[Location]bool{}
	var current string
	add := func(file, line, col string) bool {
		loc, ok := l.resolve(file, line, col)
		if ok && !seen[loc] {
			seen[loc] = true
			out = append(out, Finding{Location: loc, Message: strings.TrimSpace(current)})
		}
		return len(out) < MaxLocations
	}
	text = strings.ReplaceAll(text, "file://", "") // ESM stack frames name file:///abs/f.mjs:1:2
	stylish := ""
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		current = line
		if line != "" && line[0] != ' ' && !strings.ContainsAny(line, " \t") {
			if m := stylishFile.FindStringSubmatch(line); m != nil {
				if _, ok := l.resolve(m[1], "", ""); ok {
					stylish = m[1]
					continue
				}
			}
		}
		if stylish != "" {
			if m := stylishLoc.FindStringSubmatch(line); m != nil {
				if !add(stylish, m[1], m[2]) {
					return out
				}
				continue
			}
			if strings.TrimSpace(line) == "" {
				stylish = ""
			}
		}
		if !lineLocations(line, add) {
			return out
		}
	}
	return out
}

// resolve turns what an output says into a Location of an existing workspace file.
func (l *Locator) resolve(file, line, col string) (Location, bool) {
	file = strings.TrimPrefix(file, "./")
	if file == "" {
		return Location{}, false
	}
	loc := Location{}
	if line != "" {
		n, err := strconv.Atoi(line)
		if err != nil || n < 1 {
			return Location{}, false
		}
		loc.Line = n
	}
	if col != "" && loc.Line > 0 {
		if n, err := strconv.Atoi(col); err == nil && n >= 1 {
			loc.Col = n
		}
	}
	var candidates []string
	if filepath.IsAbs(file) {
		candidates = []string{filepath.Clean(file)}
	} else {
		for _, b := range l.bases {
			candidates = append(candidates, filepath.Join(b, file))
		}
	}
	for _, c := range candidates {
		if l.inWorkspace(c) && l.exists(c) {
			loc.File = c
			return loc, true
		}
	}
	return Location{}, false
}

func (l *Locator) inWorkspace(path string) bool {
	rel, err := filepath.Rel(l.root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return false
	}
	for part := range strings.SplitSeq(filepath.ToSlash(rel), "/") {
		if part == "node_modules" {
			return false
		}
	}
	return true
}

func (l *Locator) exists(path string) bool {
	if ok, seen := l.isFile[path]; seen {
		return ok
	}
	fi, err := os.Stat(path)
	ok := err == nil && fi.Mode().IsRegular()
	l.isFile[path] = ok
	return ok
}
