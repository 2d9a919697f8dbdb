package cache

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
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
	// others reports whether a root-relative path matches the declared outputs of a task of
	// another project.
	others func(rootRel string) bool
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
	o := &outputSet{root: ws.Root, dir: p.Dir, set: set, globs: globs, others: otherOutputs(ws, p)}
	if rel, err := filepath.Rel(ws.Root, ws.CacheDir); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		o.stateRel = filepath.ToSlash(rel)
	}
	return o, nil
}

// otherOutputs answers whether a root-relative path matches the declared outputs of a task of a
// project other than p; the globs are read on the first question (only a link out of its task's
// outputs asks it).
func otherOutputs(ws *graph.Workspace, p *graph.Project) func(rootRel string) bool {
	var sets []*pathglob.Set
	read := false
	return func(rel string) bool {
		if !read {
			read = true
			for _, q := range ws.Projects {
				if q == p || q.Name == p.Name {
					continue
				}
				for _, t := range q.Tasks {
					if set, err := pathglob.NewSet(q.Dir, t.Outputs); err == nil && len(t.Outputs) > 0 {
						sets = append(sets, set)
					}
				}
			}
		}
		for _, set := range sets {
			if set.Match(rel) {
				return true
			}
		}
		return false
	}
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

// linkRefusal answers why a symlink at rootRel with target may not be an output, "" when it may.
// A link may be an output when its target is relative, climbs (its ".." elements all come first)
// before it descends, and resolved lexically from the link's own folder is either inside the
// task's declared outputs or a folder that holds the link: its project folder or a folder between
// the two (a package's link to itself, as tshy leaves in dist/node_modules). It is never inside
// the state folder, .git or another project's outputs, and never is or passes through a link of
// the outputs that points out of them (outside, the set of those by root-relative path), so that
// its lexical target is where the file system leads. Anywhere else a link would let the task's next run write through it
// into a source, the config or .git; an absolute target names one machine's folders and may lie
// anywhere. A link to a folder holding it is never followed: the outputs are walked without
// following links, and a restore writes through none.
func (o *outputSet) linkRefusal(rootRel, target string, outside map[string]bool) string {
	target = filepath.ToSlash(target)
	switch {
	case target == "":
		return "an empty target"
	case filepath.IsAbs(target) || strings.HasPrefix(target, "/") || strings.HasPrefix(target, "\\"):
		return "an absolute target"
	}
	if climbsLate(target) {
		return "a target that climbs (..) after it descends"
	}
	resolved := path.Clean(path.Join(path.Dir(rootRel), target))
	switch {
	case resolved == ".." || strings.HasPrefix(resolved, "../"):
		return "outside the workspace"
	case o.inState(resolved):
		return "inside vx's state folder"
	case resolved == ".git" || strings.HasPrefix(resolved, ".git/"):
		return "inside .git"
	case throughLink(resolved, outside):
		return "through another link of the outputs, which points out of them"
	case o.allowed(resolved):
		return ""
	case o.others != nil && o.others(resolved):
		return "inside another project's outputs"
	case !o.inProject(resolved):
		return "outside its project"
	case !holds(resolved, rootRel):
		return "outside the task's outputs, and not a folder that holds the link"
	}
	return ""
}

// climbsLate reports whether a relative link target has a ".." element after a name: resolved by
// the file system, that ".." climbs from wherever the name led (another link's target), not from
// where the lexical resolution says.
func climbsLate(target string) bool {
	named := false
	for _, el := range strings.Split(target, "/") {
		switch el {
		case "", ".":
		case "..":
			if named {
				return true
			}
		default:
			named = true
		}
	}
	return false
}

// throughLink reports whether the root-relative path rel, or a folder above it, is one of links.
func throughLink(rel string, links map[string]bool) bool {
	for p := rel; p != "." && p != "/" && p != ""; p = path.Dir(p) {
		if links[p] {
			return true
		}
	}
	return false
}

// linkRefusals answers, for the links of a task's outputs (root-relative path → target), the
// first one in path order that may not be an output and why (linkRefusal); why is "" when each
// may. A link among them that points out of the outputs (to a folder that holds it) may be no
// other link's way: through it the file system leaves the outputs where the text stays in them.
func (o *outputSet) linkRefusals(links map[string]string) (rel, why string) {
	outside := map[string]bool{}
	for l, target := range links {
		if !o.allowed(path.Clean(path.Join(path.Dir(l), filepath.ToSlash(target)))) {
			outside[l] = true
		}
	}
	for _, l := range slices.Sorted(maps.Keys(links)) {
		if why := o.linkRefusal(l, links[l], outside); why != "" {
			return l, why
		}
	}
	return "", ""
}

// inProject reports whether a root-relative path is the task's project folder or lies inside it.
func (o *outputSet) inProject(rel string) bool {
	return o.dir == "." || rel == o.dir || strings.HasPrefix(rel, o.dir+"/")
}

// inState reports whether a root-relative path is the state folder or lies inside it.
func (o *outputSet) inState(rel string) bool {
	return o.stateRel != "" && (rel == o.stateRel || strings.HasPrefix(rel, o.stateRel+"/"))
}

// holds reports whether the root-relative folder dir holds the root-relative path rel.
func holds(dir, rel string) bool {
	return dir == "." || strings.HasPrefix(rel, dir+"/")
}

// errLinkOut is an output symlink that may not be one (linkRefusal says why).
func errLinkOut(name, target, why string) error {
	return fmt.Errorf("output %s is a symlink to %s, %s", name, target, why)
}
