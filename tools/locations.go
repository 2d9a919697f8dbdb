package tools

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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

// maxLocations bounds the locations answered for one task: past it the output is noise.
const maxLocations = 50

// Location patterns, each naming the groups file, line and col.
var (
	// `File "f", line N` — a Python traceback.
	pythonLoc = regexp.MustCompile(`File "(?P<file>[^"]+)", line (?P<line>\d+)`)
	// `f(line,col)` — tsc without --pretty, MSBuild-style tools.
	parenLoc = regexp.MustCompile(`(?:^|[\s'"\[])(?P<file>[^\s()\[\]'"<>|,:]+)\((?P<line>\d+),(?P<col>\d+)\)`)
	// `f:line:col` and `f:line` — tsc --pretty, Go, ESLint's unix format, GCC and Clang, Rust's
	// `--> f:line:col`, Vitest's `❯ f:line:col`, and stack frames `at fn (f:line:col)` (Node, Bun,
	// Jest): the file starts a word or follows an opening bracket, a quote, an arrow or `=`.
	colonLoc = regexp.MustCompile(`(?:^|[\s(\['"<>=,❯›→])(?P<file>[^\s:()\[\]'"<>|,❯›→]+):(?P<line>\d+)(?::(?P<col>\d+))?\b`)
	// ESLint's default (stylish) format: a line holding only a file, then `  line:col  error …`.
	stylishFile = regexp.MustCompile(`^(?P<file>[^\s:]+\.\w+)$`)
	stylishLoc  = regexp.MustCompile(`^\s+(?P<line>\d+):(?P<col>\d+)\s+(?:error|warning)\s`)
)

// locator finds the locations an output names that are files of the workspace.
type locator struct {
	// bases are the folders a relative path is tried against, in order: the task's project
	// folder, then the workspace root.
	bases []string
	root  string
	// isFile caches what a path is, so an output naming one file a thousand times stats it once.
	isFile map[string]bool
}

// newLocator returns a locator for a task of the project in projectDir ("" when unknown) of the
// workspace at root.
func newLocator(root, projectDir string) *locator {
	l := &locator{root: filepath.Clean(root), isFile: map[string]bool{}}
	if projectDir != "" {
		l.bases = append(l.bases, filepath.Clean(projectDir))
	}
	if projectDir == "" || filepath.Clean(projectDir) != l.root {
		l.bases = append(l.bases, l.root)
	}
	return l
}

// parseLocations answers the locations text names, in the order it names them, each once: the
// formats of locationPatterns. A file is kept only when it exists inside the workspace root and
// not under node_modules (a frame of a dependency is not a place to fix); a relative path is
// resolved against the project folder, then the workspace root.
func (l *locator) parseLocations(text string) []Location {
	out := []Location{}
	seen := map[Location]bool{}
	add := func(file, line, col string) bool {
		loc, ok := l.resolve(file, line, col)
		if ok && !seen[loc] {
			seen[loc] = true
			out = append(out, loc)
		}
		return len(out) < maxLocations
	}
	text = strings.ReplaceAll(text, "file://", "") // ESM stack frames name file:///abs/f.mjs:1:2
	stylish := ""
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		if m := stylishFile.FindStringSubmatch(strings.TrimSpace(line)); m != nil && !strings.HasPrefix(line, " ") {
			if _, ok := l.resolve(m[1], "", ""); ok {
				stylish = m[1]
				continue
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
		for _, re := range []*regexp.Regexp{pythonLoc, parenLoc, colonLoc} {
			for _, m := range re.FindAllStringSubmatch(line, -1) {
				if !add(group(re, m, "file"), group(re, m, "line"), group(re, m, "col")) {
					return out
				}
			}
		}
	}
	return out
}

func group(re *regexp.Regexp, m []string, name string) string {
	if i := re.SubexpIndex(name); i >= 0 && i < len(m) {
		return m[i]
	}
	return ""
}

// resolve turns what an output says into a Location of an existing workspace file.
func (l *locator) resolve(file, line, col string) (Location, bool) {
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

func (l *locator) inWorkspace(path string) bool {
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

func (l *locator) exists(path string) bool {
	if ok, seen := l.isFile[path]; seen {
		return ok
	}
	fi, err := os.Stat(path)
	ok := err == nil && fi.Mode().IsRegular()
	l.isFile[path] = ok
	return ok
}
