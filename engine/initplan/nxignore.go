package initplan

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ignoreRule is one line of a .gitignore-style file.
type ignoreRule struct {
	pattern string // a doublestar pattern matched against the whole root-relative path
	negate  bool   // "!pattern": the path is not ignored after all
	dirOnly bool   // "pattern/": matches folders only
}

// ignoreRules are the rules of one .gitignore-style file at the workspace root, in file order:
// the last rule that matches a path decides.
type ignoreRules []ignoreRule

// readIgnoreFile reads the .gitignore-style file name at root; a missing file ignores nothing.
func readIgnoreFile(root, name string) (ignoreRules, error) {
	data, err := os.ReadFile(filepath.Join(root, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return parseIgnore(string(data)), nil
}

// parseIgnore reads .gitignore syntax: blank lines and "#" comments are skipped, "!" negates, a
// trailing "/" matches folders only, a pattern with a "/" before its end is anchored at the root
// and one without matches at any depth; "\" escapes a leading "#" or "!".
func parseIgnore(text string) ignoreRules {
	var rules ignoreRules
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, " \t\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var r ignoreRule
		if rest, ok := strings.CutPrefix(line, "!"); ok {
			r.negate, line = true, rest
		} else if strings.HasPrefix(line, `\#`) || strings.HasPrefix(line, `\!`) {
			line = line[1:]
		}
		if rest, ok := strings.CutSuffix(line, "/"); ok {
			r.dirOnly, line = true, rest
		}
		if line == "" {
			continue
		}
		if strings.Contains(line, "/") {
			r.pattern = strings.TrimPrefix(line, "/")
		} else {
			r.pattern = "**/" + line
		}
		rules = append(rules, r)
	}
	return rules
}

// ignored reports whether rel (a slash path from the root) is ignored: it is when a folder above
// it is, as git never looks inside an ignored folder (no negation brings back a path under one),
// or when the last rule that matches it does not negate.
func (rules ignoreRules) ignored(rel string, isDir bool) bool {
	if len(rules) == 0 || rel == "." || rel == "" {
		return false
	}
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		if rules.matches(strings.Join(parts[:i], "/"), true) {
			return true
		}
	}
	return rules.matches(rel, isDir)
}

// matches applies the rules to rel alone, its folders left aside.
func (rules ignoreRules) matches(rel string, isDir bool) bool {
	out := false
	for _, r := range rules {
		if r.dirOnly && !isDir {
			continue
		}
		if ok, _ := doublestar.Match(r.pattern, rel); ok {
			out = !r.negate
		}
	}
	return out
}
