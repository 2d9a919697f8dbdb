// Package depversions reads the lockfile of a JavaScript workspace and answers, for each project, the
// external npm packages it resolves to, directly and transitively, with their resolved versions.
// Those answers enter the cache key, so a dependency bump invalidates exactly the tasks of the
// projects that can see it.
//
// Formats: package-lock.json and npm-shrinkwrap.json (lockfileVersion 2 and 3), pnpm-lock.yaml
// (lockfileVersion 6.x and 9.x, one or two documents), yarn.lock (classic v1 and berry) and
// bun.lock (the text format of bun 1.2 and later). Each reader reduces its format to one graph
// of external packages; workspace packages are never part of it, so a project's answer stops at
// the projects it depends on (their tasks enter the key through their own keys).
//
// A lockfile this package cannot parse (bun.lockb, an older or newer format version, a corrupt
// file) still reads: it answers Unparsed, and its Hash stands for every project.
package depversions

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// names lists the lockfiles Find looks for, in order.
var names = []string{"package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock", "bun.lock", "bun.lockb"}

// Find locates the lockfile at the workspace root: the first of package-lock.json,
// npm-shrinkwrap.json, pnpm-lock.yaml, yarn.lock, bun.lock and bun.lockb that is a regular file
// there. It answers the root-relative file name, or "" when there is none.
func Find(root string) string {
	for _, name := range names {
		if fi, err := os.Stat(filepath.Join(root, name)); err == nil && fi.Mode().IsRegular() {
			return name
		}
	}
	return ""
}

// Lockfile is a lockfile as read: its hash always, and the resolved graph when its format parsed.
type Lockfile struct {
	// File is the lockfile's path relative to the workspace root, slash-separated.
	File string
	// Hash is the SHA-256 (hex) of the whole file. When the file could not be parsed it stands
	// for every project's dependencies.
	Hash string
	// Unparsed is true when the file's format or content could not be parsed.
	Unparsed bool
	// Err says why the file could not be parsed, when Unparsed.
	Err error

	graph *graph
}

// Read parses the lockfile file (a root-relative name, as Find answers) under root. A format it
// cannot parse is not an error: it answers a Lockfile with Unparsed set and Err the reason, whose
// Hash stands for the whole file. An I/O error is an error. A yarn classic lockfile names no
// projects, so Read also reads the workspace's package.json files for it.
func Read(root, file string) (*Lockfile, error) {
	file = path.Clean(filepath.ToSlash(file))
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	sum := sha256.Sum256(data)
	l := &Lockfile{File: file, Hash: hex.EncodeToString(sum[:])}
	g, err := parse(file, data, os.DirFS(root))
	var perr *unparsableError
	switch {
	case errors.As(err, &perr):
		l.Unparsed, l.Err = true, fmt.Errorf("parse %s: %w", file, perr.err)
	case err != nil:
		return nil, err
	default:
		l.graph = g
	}
	return l, nil
}

// Packages answers the external packages the project in dir (a root-relative slash path, "." for
// the root) resolves to, directly and transitively: package name → its resolved version(s),
// several versions joined by ", " in sorted (byte) order. A package reached through an alias
// answers under the alias with the version "npm:<name>@<version>". Workspace packages (links, the
// workspace: protocol, file: folders) are neither listed nor followed. A dir the lockfile does not
// know answers an empty map; an Unparsed lockfile answers nil. Packages is safe for concurrent
// use; each package's closure is computed once.
func (l *Lockfile) Packages(dir string) map[string]string {
	if l.Unparsed || l.graph == nil {
		return nil
	}
	direct, ok := l.graph.importers[path.Clean(dir)]
	if !ok {
		return map[string]string{}
	}
	return l.graph.answer(l.graph.reach(direct))
}

// unparsableError marks a parse failure, which Read turns into an Unparsed lockfile rather than
// an error.
type unparsableError struct{ err error }

func (e *unparsableError) Error() string { return e.err.Error() }
func (e *unparsableError) Unwrap() error { return e.err }

// unparsable wraps a parse failure.
func unparsable(format string, args ...any) error {
	return &unparsableError{fmt.Errorf(format, args...)}
}

// parse reads the lockfile data named file (root-relative); fsys is the workspace root, which
// yarn classic needs for the projects' package.json files. A parse failure is an
// *unparsableError.
func parse(file string, data []byte, fsys fs.FS) (*graph, error) {
	base := path.Dir(file)
	switch path.Base(file) {
	case "package-lock.json", "npm-shrinkwrap.json":
		return parseNpm(data, base)
	case "pnpm-lock.yaml":
		return parsePnpm(data, base)
	case "yarn.lock":
		if isBerry(data) {
			return parseBerry(data, base)
		}
		return parseYarn(data, base, fsys)
	case "bun.lock":
		return parseBun(data, base)
	case "bun.lockb":
		return nil, unparsable("bun.lockb is binary; `bun install --save-text-lockfile` writes the readable bun.lock")
	}
	return nil, unparsable("not a lockfile vx knows")
}

// localRef reports whether a dependency's range or resolution points into the workspace or the
// file system (workspace:, link:, portal:, root:, a file: folder) rather than at an external
// package. A file: tarball is external: its version is what the lockfile resolved.
func localRef(ref string) bool {
	for _, p := range []string{"workspace:", "link:", "portal:", "root:"} {
		if strings.HasPrefix(ref, p) {
			return true
		}
	}
	return strings.HasPrefix(ref, "file:") && !isTarball(ref)
}

func isTarball(ref string) bool {
	ref, _, _ = strings.Cut(ref, "#")
	return strings.HasSuffix(ref, ".tgz") || strings.HasSuffix(ref, ".tar.gz") || strings.HasSuffix(ref, ".tar")
}

// versionText is how an edge reports the package real at version when its dependent names it
// name: the version, or for an alias "npm:<real>@<version>".
func versionText(name, real, version string) string {
	if real == "" || real == name {
		return version
	}
	return "npm:" + real + "@" + version
}

// splitIdent splits "name@version" at the @ that ends the name (a scoped name starts with @).
func splitIdent(ident string) (name, version string, ok bool) {
	if ident == "" {
		return "", "", false
	}
	i := strings.IndexByte(ident[1:], '@')
	if i < 0 {
		return "", "", false
	}
	return ident[:i+1], ident[i+2:], true
}
