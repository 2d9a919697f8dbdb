package hasher

import (
	"context"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/pathglob"
)

// Inputs lists the task's input files, sorted: relative to its project folder, or "//"-prefixed
// and relative to the workspace root for a file outside the project that a "//" glob names.
// Every input is a file git would show (tracked, or untracked and not ignored; outside a git
// repository, every file), never under node_modules, never in the state folder, never in a
// project nested inside this one, and never a file the task declares as an output. With no input
// globs they are every such file of the project; with globs, those the globs match (a glob
// starting with "!" removes what it matches; '$default' among them stands for the default).
func (h *Hasher) Inputs(ctx context.Context, p *graph.Project, t *graph.Task) ([]string, error) {
	outputs, err := pathglob.NewSet(p.Dir, t.Outputs)
	if err != nil {
		return nil, fmt.Errorf("outputs of %s: %w", t.ID, err)
	}
	keep := func(rootRel string) bool {
		return !outputs.Match(rootRel) && !h.excluded(p, rootRel)
	}
	var files []string
	if t.InputsDefault() {
		all, err := h.projectFiles(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, f := range all {
			if keep(joinRel(p.Dir, f)) {
				files = append(files, f)
			}
		}
		return files, nil
	}
	inputs, err := pathglob.NewSet(p.Dir, t.OwnInputs())
	if err != nil {
		return nil, fmt.Errorf("inputs of %s: %w", t.ID, err)
	}
	if inputs.Empty() {
		return []string{}, nil
	}
	own, err := h.projectFiles(ctx, p)
	if err != nil {
		return nil, err
	}
	for _, f := range own {
		rel := joinRel(p.Dir, f)
		if (inputs.Match(rel) || inputs.WithDefault() && !inputs.Excluded(rel)) && keep(rel) {
			files = append(files, f)
		}
	}
	if outside := outsideBases(p.Dir, inputs.Bases()); len(outside) > 0 {
		others, err := h.rootFiles(ctx, outside)
		if err != nil {
			return nil, fmt.Errorf("inputs of %s: %w", t.ID, err)
		}
		prefix := p.Dir + "/"
		for _, rel := range others {
			if p.Dir != "." && (rel == p.Dir || strings.HasPrefix(rel, prefix)) {
				continue // listed with the project's own files
			}
			if inputs.Match(rel) && !outputs.Match(rel) && !h.excluded(nil, rel) {
				files = append(files, pathglob.RootPrefix+rel)
			}
		}
	}
	sort.Strings(files)
	return slices.Compact(files), nil
}

// GlobalInputs lists the files the workspace's global input globs match, root-relative and
// sorted, with the same rules as a task's inputs.
func (h *Hasher) GlobalInputs(ctx context.Context, globs []string) ([]string, error) {
	set, err := pathglob.NewSet(".", globs)
	if err != nil {
		return nil, fmt.Errorf("globalInputs: %w", err)
	}
	if set.Empty() {
		return nil, nil
	}
	all, err := h.rootFiles(ctx, set.Bases())
	if err != nil {
		return nil, fmt.Errorf("globalInputs: %w", err)
	}
	var out []string
	for _, rel := range all {
		if set.Match(rel) && !h.excluded(nil, rel) {
			out = append(out, rel)
		}
	}
	return out, nil
}

// excluded reports whether a root-relative file is never an input: under node_modules, in the
// state folder, or (for project p) inside another project nested in p.
func (h *Hasher) excluded(p *graph.Project, rootRel string) bool {
	if underNodeModules(rootRel) {
		return true
	}
	if h.stateRel != "" && (rootRel == h.stateRel || strings.HasPrefix(rootRel, h.stateRel+"/")) {
		return true
	}
	if p == nil {
		return false
	}
	if inner := h.nested[p.Dir]; len(inner) > 0 {
		// The folders holding the file, up to p's own: is one of them another project's?
		for d := path.Dir(rootRel); d != "." && d != p.Dir; d = path.Dir(d) {
			if inner[d] {
				return true
			}
		}
	}
	return false
}

// underNodeModules reports whether a slash path is, or lies in, a node_modules folder (or a
// symlink of that name).
func underNodeModules(rel string) bool {
	for rest := rel; rest != ""; {
		seg, after, _ := strings.Cut(rest, "/")
		if seg == "node_modules" {
			return true
		}
		rest = after
	}
	return false
}

// outsideBases answers the bases that may hold files outside the project folder dir.
func outsideBases(dir string, bases []string) []string {
	if dir == "." {
		return nil // the root project's own listing is the whole workspace
	}
	var out []string
	for _, b := range bases {
		if b != dir && !strings.HasPrefix(b, dir+"/") {
			out = append(out, b)
		}
	}
	return out
}

// nestedDirs maps each project folder to the set of the folders of the projects inside it. The
// folders under outer are those from outer+"/" up to outer+"0" ('0' follows '/') in sorted order.
func nestedDirs(dirs []string) map[string]map[string]bool {
	sorted := slices.Clone(dirs)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	out := map[string]map[string]bool{}
	add := func(outer string, inner []string) {
		for _, d := range inner {
			if d == "." {
				continue
			}
			if out[outer] == nil {
				out[outer] = map[string]bool{}
			}
			out[outer][d] = true
		}
	}
	for _, outer := range sorted {
		if outer == "." {
			add(".", sorted)
			continue
		}
		lo, _ := slices.BinarySearch(sorted, outer+"/")
		hi, _ := slices.BinarySearch(sorted, outer+"0")
		add(outer, sorted[lo:hi])
	}
	return out
}

// projectFiles answers the git-visible files of a project, relative to its folder, sorted. The
// whole workspace is listed with one git call and split by project; a project whose tasks wrote
// files since is listed again on its own.
func (h *Hasher) projectFiles(ctx context.Context, p *graph.Project) ([]string, error) {
	h.mu.Lock()
	files, ok := h.listings[p.Dir]
	stale := h.stale[p.Dir]
	generation := h.invalidations[p.Dir]
	fromRoot := !h.wroteOutside
	h.mu.Unlock()
	if ok && !stale {
		return files, nil
	}
	var err error
	walked := false
	if ok && stale {
		// A restore's change, made now; or its tasks wrote files: mended by a walk of its folder
		// where that can vouch for it.
		if mended, ok := h.mended(ctx, p.Dir, generation); ok {
			files, walked = mended, true
		} else {
			files, walked = h.relistWalk(ctx, p.Dir, files)
		}
	}
	switch {
	case walked:
	case !ok && !stale && !h.watched() && fromRoot:
		files, err = h.fromRootListing(ctx, p.Dir)
	default:
		// A watcher's snapshot lists a project's folders at once; the file system is asked
		// again only for a project whose tasks wrote files.
		files, err = h.listDir(ctx, p.Dir)
	}
	if err != nil {
		return nil, fmt.Errorf("list files of %s: %w", p.Name, err)
	}
	h.mu.Lock()
	h.listings[p.Dir] = files
	if h.invalidations[p.Dir] == generation {
		delete(h.stale, p.Dir)
	} else {
		h.stale[p.Dir] = true // a task of the project started or wrote while it was listed
	}
	h.mu.Unlock()
	return files, nil
}

// rootList answers the listing of the whole workspace, taken once per hasher: workers asking at
// once wait for the one git call rather than each making its own.
func (h *Hasher) rootListing(ctx context.Context) ([]string, error) {
	h.listMu.Lock()
	defer h.listMu.Unlock()
	h.mu.Lock()
	root := h.rootList
	h.mu.Unlock()
	if root != nil {
		return root, nil
	}
	root, ok := h.earlyListing()
	if !ok {
		var err error
		if root, err = h.listDir(ctx, "."); err != nil {
			return nil, err
		}
	}
	h.mu.Lock()
	h.rootList = root
	h.mu.Unlock()
	return root, nil
}

func (h *Hasher) fromRootListing(ctx context.Context, dir string) ([]string, error) {
	root, err := h.rootListing(ctx)
	if err != nil {
		return nil, err
	}
	if dir == "." || dir == "" {
		return root, nil
	}
	var out []string
	for _, f := range underPrefix(root, dir+"/") {
		out = append(out, f[len(dir)+1:])
	}
	return out, nil
}

// underPrefix answers the entries of a sorted listing that start with prefix.
func underPrefix(sorted []string, prefix string) []string {
	i := sort.SearchStrings(sorted, prefix)
	j := i
	for j < len(sorted) && strings.HasPrefix(sorted[j], prefix) {
		j++
	}
	return sorted[i:j]
}

// rootFiles answers the git-visible files under the root-relative folders bases, root-relative
// and sorted. Before any task wrote files it is cut from the root listing; after, those folders
// are listed again.
func (h *Hasher) rootFiles(ctx context.Context, bases []string) ([]string, error) {
	h.mu.Lock()
	stale := h.rootStale
	h.mu.Unlock()
	var out []string
	for _, b := range bases {
		var files []string
		if !stale {
			root, err := h.rootListing(ctx)
			if err != nil {
				return nil, err
			}
			if b == "." {
				files = root
			} else {
				files = underPrefix(root, b+"/")
				if i := sort.SearchStrings(root, b); i < len(root) && root[i] == b {
					files = append([]string{b}, files...)
				}
			}
		} else {
			fi, err := h.source().Lstat(b)
			switch {
			case err != nil:
				continue
			case fi.IsDir():
				listed, err := h.listDir(ctx, b)
				if err != nil {
					return nil, err
				}
				for _, f := range listed {
					files = append(files, joinRel(b, f))
				}
			default:
				files = []string{b}
			}
		}
		out = append(out, files...)
	}
	sort.Strings(out)
	return slices.Compact(out), nil
}

// listDir lists the files of the root-relative folder dir that git would show, relative to dir
// and sorted, from the hasher's file state.
func (h *Hasher) listDir(ctx context.Context, dir string) ([]string, error) {
	return h.source().Visible(ctx, dir)
}
