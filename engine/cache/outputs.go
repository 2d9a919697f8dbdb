package cache

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/pathglob"
)

// An output's archive path is relative to its project folder, or "//"-prefixed and relative to the
// workspace root for an output outside the project ("//dist/apps/web/main.js").

// outputSet is a task's declared outputs, resolved against the workspace root.
type outputSet struct {
	root     string // absolute workspace root
	dir      string // the project folder, root-relative
	stateRel string // the state folder, root-relative ("" when outside the root)
	set      *pathglob.Set
	globs    []pathglob.Glob
	// tree answers lstat and walks from the run's file state; nil looks at the disk.
	tree FileTree
}

// lstat answers a root-relative path's lstat, from the tree when there is one.
func (o *outputSet) lstat(rel string) (fs.FileInfo, error) {
	if o.tree != nil {
		return o.tree.Lstat(rel)
	}
	return os.Lstat(filepath.Join(o.root, filepath.FromSlash(rel)))
}

func newOutputSet(ws *graph.Workspace, p *graph.Project, t *graph.Task) (*outputSet, error) {
	set, err := pathglob.NewSet(p.Dir, t.Outputs)
	if err != nil {
		return nil, fmt.Errorf("outputs of %s: %w", t.ID, err)
	}
	globs, _ := pathglob.ParseAll(t.Outputs)
	o := &outputSet{root: ws.Root, dir: p.Dir, set: set, globs: globs}
	if rel, err := filepath.Rel(ws.Root, ws.CacheDir); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		o.stateRel = filepath.ToSlash(rel)
	}
	return o, nil
}

// rootRel maps an archive path to its root-relative path; ok is false for a path that leaves the
// workspace or is not clean.
func (o *outputSet) rootRel(name string) (string, bool) {
	rel, fromRoot := strings.CutPrefix(name, pathglob.RootPrefix)
	if rel == "" || path.Clean(rel) != rel || path.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	if !fromRoot && o.dir != "." {
		rel = o.dir + "/" + rel
	}
	return rel, true
}

// archiveName maps a root-relative path to its archive path.
func (o *outputSet) archiveName(rootRel string) string {
	switch {
	case o.dir == ".":
		return rootRel
	case strings.HasPrefix(rootRel, o.dir+"/"):
		return rootRel[len(o.dir)+1:]
	}
	return pathglob.RootPrefix + rootRel
}

// allowed reports whether a root-relative path is one the task declares as an output.
func (o *outputSet) allowed(rootRel string) bool {
	if o.stateRel != "" && (rootRel == o.stateRel || strings.HasPrefix(rootRel, o.stateRel+"/")) {
		return false
	}
	return rootRel != ".git" && !strings.HasPrefix(rootRel, ".git/") && o.set.Match(rootRel)
}

// list answers the files and symlinks on disk matching the outputs, root-relative and sorted. It
// never descends through a symlinked folder: a symlink is an output itself.
func (o *outputSet) list() ([]string, error) {
	var fsys fs.FS
	found := map[string]bool{}
	for _, g := range o.globs {
		if g.Negated {
			continue
		}
		pattern := g.FromRoot(o.dir)
		if base, ok := strings.CutSuffix(pattern, "/**"); ok && !strings.ContainsAny(base, "*?[{\\") {
			// A whole folder ("dist/**", the common case): walked directly, which costs a
			// fraction of matching each path against the pattern.
			if err := o.walk(base, found); err != nil {
				return nil, fmt.Errorf("glob %q: %w", g.String(), err)
			}
			continue
		}
		if fsys == nil {
			fsys = os.DirFS(o.root)
		}
		matches, err := doublestar.Glob(fsys, pattern, doublestar.WithFilesOnly(), doublestar.WithNoFollow())
		if err != nil {
			return nil, fmt.Errorf("glob %q: %w", g.String(), err)
		}
		for _, m := range matches {
			if o.allowed(m) {
				found[m] = true
			}
		}
	}
	out := make([]string, 0, len(found))
	for f := range found {
		out = append(out, f)
	}
	sort.Strings(out)
	return out, nil
}

// walk adds to found the files and symlinks under the root-relative folder base that the outputs
// allow, never descending through a symlink, into .git or into the state folder. A base that is
// missing, or is not a folder, holds nothing.
func (o *outputSet) walk(base string, found map[string]bool) error {
	fi, err := o.lstat(base)
	if err != nil {
		return nil
	}
	if !fi.IsDir() {
		// A symlink (or file) where the folder would be is an output itself, when allowed.
		if (fi.Mode().IsRegular() || fi.Mode()&fs.ModeSymlink != 0) && o.allowed(base) {
			found[base] = true
		}
		return nil
	}
	add := func(rel string, _ fs.FileMode) {
		if o.allowed(rel) {
			found[rel] = true
		}
	}
	if o.tree != nil {
		return o.tree.WalkFiles(base, add)
	}
	stateDir := ""
	if o.stateRel != "" {
		stateDir = filepath.Join(o.root, filepath.FromSlash(o.stateRel))
	}
	return filestate.WalkDisk(o.root, stateDir, base, add)
}

// linkAllowed reports whether a symlink at rootRel with target points inside the task's declared
// outputs, resolved lexically from the link's own folder: a link into the sources, the config or
// .git would let the task's next run write there through it, and an absolute target names one
// machine's folders and may lie anywhere.
func (o *outputSet) linkAllowed(rootRel, target string) bool {
	if filepath.IsAbs(target) || strings.HasPrefix(target, "/") || strings.HasPrefix(target, "\\") {
		return false
	}
	resolved := path.Clean(path.Join(path.Dir(rootRel), filepath.ToSlash(target)))
	if resolved == ".." || strings.HasPrefix(resolved, "../") {
		return false
	}
	return o.allowed(resolved)
}

// errLinkOut is an output symlink that points out of the task's outputs.
func errLinkOut(name, target string) error {
	return fmt.Errorf("output %s is a symlink to %s, outside the task's outputs", name, target)
}
