package agents

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// errLink ends the error for a path that is, or goes through, a symbolic link.
var errLink = errors.New("refusing to read or write through it")

// newFileMode is the mode of a file vx agents creates; a file it replaces keeps its own.
const newFileMode fs.FileMode = 0o644

// current is what a file holds before vx agents writes it.
type current struct {
	data   []byte
	mode   fs.FileMode
	exists bool
}

// linkError names a path (relative to the root) that is a symbolic link.
func linkError(rel string) error {
	return fmt.Errorf("%s is a symbolic link; %w", rel, errLink)
}

// components splits a slash-separated path relative to the root into its names, refusing one that
// is absolute or climbs out of the root.
func components(rel string) ([]string, error) {
	clean := path.Clean(rel)
	if path.IsAbs(rel) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
		return nil, fmt.Errorf("%s is not inside the workspace", rel)
	}
	return strings.Split(clean, "/"), nil
}

// describe names a file that is neither a regular file nor a symbolic link.
func describe(rel string, mode fs.FileMode) error {
	if mode.IsDir() {
		return fmt.Errorf("%s is a folder, want a file", rel)
	}
	return fmt.Errorf("%s is not a regular file (%s)", rel, mode.Type())
}

// hardLinkError names a file with more than one name: rewriting it would change what the other
// names show, or copy their content into a new file.
func hardLinkError(rel string, links uint64) error {
	return fmt.Errorf("%s has %d hard links; refusing to read or rewrite a file that has other names", rel, links)
}
