package hasher

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/vzn/vx/engine/git"
	"github.com/vzn/vx/engine/graph"
)

// Inputs lists the task's input files relative to its project folder, sorted. With no input globs
// they are every file of the project git does not ignore (tracked or not), less the task's own
// outputs; outside a git repository, every file of the project. With globs, the files they match
// (a glob starting with "!" removes what it matches). The state folder is never an input.
func (h *Hasher) Inputs(ctx context.Context, p *graph.Project, t *graph.Task) ([]string, error) {
	var files []string
	if t.InputsDefault() {
		all, err := h.projectFiles(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, f := range all {
			if !matchAny(t.Outputs, f) {
				files = append(files, f)
			}
		}
	} else {
		var err error
		if files, err = globFiles(p.AbsDir, t.Inputs); err != nil {
			return nil, fmt.Errorf("inputs of %s: %w", t.ID, err)
		}
	}
	out := files[:0]
	for _, f := range files {
		if !h.inStateDir(p, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

func (h *Hasher) inStateDir(p *graph.Project, rel string) bool {
	if h.opts.CacheDir == "" {
		return false
	}
	abs := filepath.Join(p.AbsDir, filepath.FromSlash(rel))
	return abs == h.opts.CacheDir || strings.HasPrefix(abs, h.opts.CacheDir+string(filepath.Separator))
}

func matchAny(globs []string, rel string) bool {
	for _, g := range globs {
		if strings.HasPrefix(g, "!") {
			continue
		}
		if ok, _ := doublestar.Match(strings.TrimPrefix(g, "./"), rel); ok {
			return true
		}
	}
	return false
}

// globFiles answers the regular files under dir matched by globs, sorted, without duplicates.
func globFiles(dir string, globs []string) ([]string, error) {
	set := map[string]bool{}
	fsys := os.DirFS(dir)
	for _, g := range globs {
		if strings.HasPrefix(g, "!") {
			continue
		}
		matches, err := doublestar.Glob(fsys, strings.TrimPrefix(g, "./"), doublestar.WithFilesOnly())
		if err != nil {
			return nil, fmt.Errorf("glob %q: %w", g, err)
		}
		for _, m := range matches {
			set[m] = true
		}
	}
	for _, g := range globs {
		if neg, ok := strings.CutPrefix(g, "!"); ok {
			for f := range set {
				if ok, _ := doublestar.Match(strings.TrimPrefix(neg, "./"), f); ok {
					delete(set, f)
				}
			}
		}
	}
	out := make([]string, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	sort.Strings(out)
	return out, nil
}

// GlobFiles answers the regular files under dir matched by globs (relative, sorted); outputs are
// collected with it.
func GlobFiles(dir string, globs []string) ([]string, error) { return globFiles(dir, globs) }

// projectFiles answers the git-visible files of a project, relative to its folder, sorted. The
// whole workspace is listed with one git call and split by project; a project whose tasks wrote
// files since is listed again on its own.
func (h *Hasher) projectFiles(ctx context.Context, p *graph.Project) ([]string, error) {
	h.mu.Lock()
	files, ok := h.listings[p.Dir]
	stale := h.stale[p.Dir]
	h.mu.Unlock()
	if ok && !stale {
		return files, nil
	}
	var err error
	if !ok && !stale {
		files, err = h.fromRootListing(ctx, p)
	} else {
		files, err = h.listDir(ctx, p.AbsDir)
	}
	if err != nil {
		return nil, fmt.Errorf("list files of %s: %w", p.Name, err)
	}
	h.mu.Lock()
	h.listings[p.Dir] = files
	delete(h.stale, p.Dir)
	h.mu.Unlock()
	return files, nil
}

func (h *Hasher) fromRootListing(ctx context.Context, p *graph.Project) ([]string, error) {
	h.mu.Lock()
	root := h.rootList
	h.mu.Unlock()
	if root == nil {
		var err error
		if root, err = h.listDir(ctx, h.opts.Root); err != nil {
			return nil, err
		}
		h.mu.Lock()
		h.rootList = root
		h.mu.Unlock()
	}
	if p.Dir == "." || p.Dir == "" {
		return root, nil
	}
	prefix := p.Dir + "/"
	i := sort.SearchStrings(root, prefix)
	var out []string
	for ; i < len(root) && strings.HasPrefix(root[i], prefix); i++ {
		out = append(out, root[i][len(prefix):])
	}
	return out, nil
}

// listDir lists the files of dir that git does not ignore, relative to dir and sorted; outside a
// git repository, every file under dir but .git and the state folder.
func (h *Hasher) listDir(ctx context.Context, dir string) ([]string, error) {
	h.mu.Lock()
	gitOK := h.gitOK
	h.mu.Unlock()
	if gitOK == nil || *gitOK {
		files, err := gitLsFiles(ctx, dir, h.opts.CacheDir)
		ok := err == nil
		h.mu.Lock()
		h.gitOK = &ok
		h.mu.Unlock()
		if ok {
			return files, nil
		}
		if !errors.Is(err, errNotGit) {
			return nil, err
		}
	}
	return h.walk(dir)
}

var errNotGit = errors.New("not a git work tree")

func gitLsFiles(ctx context.Context, dir, stateDir string) ([]string, error) {
	args := []string{"-c", "core.quotepath=off", "ls-files", "-z", "-c", "-o", "--exclude-standard"}
	if rel, err := filepath.Rel(dir, stateDir); err == nil && stateDir != "" && !strings.HasPrefix(rel, "..") && rel != "." {
		// Untracked blobs of the state folder would cost git a walk and are never inputs.
		args = append(args, "--exclude=/"+filepath.ToSlash(rel)+"/")
	}
	out, err := git.Run(ctx, dir, args...)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) || strings.Contains(err.Error(), "not a git repository") {
			return nil, errNotGit
		}
		return nil, fmt.Errorf("list inputs in %s: %w", dir, err)
	}
	seen := map[string]bool{}
	var files []string
	for _, f := range strings.Split(out, "\x00") {
		// -c and -o can both name a file; a deleted tracked file is filtered when statted.
		if f != "" && !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}
	sort.Strings(files)
	return files, nil
}

func (h *Hasher) walk(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && (d.Name() == ".git" || d.Name() == "node_modules" || path == h.opts.CacheDir) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0 {
			rel, _ := filepath.Rel(dir, path)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk %s: %w", dir, err)
	}
	sort.Strings(files)
	return files, nil
}
