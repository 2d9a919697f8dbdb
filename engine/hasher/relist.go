package hasher

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vzn/vx/engine/git"
)

// errRelist stops a walk of relistWalk that meets what it does not vouch for.
var errRelist = errors.New("the listing is taken again by git")

// relistWalk answers the git-visible files of the project folder projectDir (root-relative) after
// its tasks wrote files, mended from old, its listing before they did, by a walk of the folder
// instead of a `git ls-files`, which reads the whole of git's index: one a task that ran made a
// cold run of a large workspace quadratic (docs/performance.md, "G3 at full size").
//
// The index does not change during a run, so a file of old that is still on disk is still shown
// (tracked, or untracked under exclude rules that did not change) and one that is gone is gone.
// What the walk finds that old lacks is asked of git's exclude rules through the hasher's one
// `git check-ignore`, a folder before anything beneath it, so that an ignored folder
// (node_modules, a build's dist/) is never walked. ok is false where the walk cannot vouch for
// the answer, and the caller asks git: the root project, a project with projects nested in it, a
// listing that names a folder (a nested repository or a submodule), a folder holding a .git, an
// exclude file (.gitignore) of the project that is new or changed since the hasher started, or any
// error. Like Restored, it takes the exclude files above the project as they were.
func (h *Hasher) relistWalk(ctx context.Context, projectDir string, old []string) (files []string, ok bool) {
	if projectDir == "." || projectDir == "" || len(h.nested[projectDir]) > 0 || h.opts.Root == "" {
		return nil, false
	}
	have := make(map[string]bool, len(old))
	dirs := map[string]bool{".": true} // the folders holding a file of old
	for _, f := range old {
		if strings.HasSuffix(f, "/") {
			return nil, false
		}
		have[f] = true
		for d := path.Dir(f); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	h.ignoreOnce.Do(func() { h.ignores = git.StartIgnoreChecker(ctx, h.opts.Root) })
	abs := filepath.Join(h.opts.Root, filepath.FromSlash(projectDir))
	stateDir := filepath.Clean(h.opts.CacheDir)
	var fresh []string
	err := filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(abs, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		name := d.Name()
		switch {
		case d.IsDir():
			if rel == "." {
				return nil
			}
			if name == ".git" || p == stateDir {
				return filepath.SkipDir
			}
			if have[rel] {
				return errRelist // a file of old is a folder now
			}
			if dirs[rel] {
				return nil // git listed files in it: no repository of its own
			}
			if _, err := os.Lstat(filepath.Join(p, ".git")); err == nil {
				return errRelist // a repository of its own: git shows it as one entry
			}
			ignored, err := h.ignores.Ignored([]string{path.Join(projectDir, rel)})
			if err != nil {
				return err
			}
			if ignored[0] {
				return filepath.SkipDir
			}
			return nil
		case !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0:
			return nil // git lists files and links only
		}
		if name == ".gitignore" {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			// A file's stamps come from a coarser clock than the hasher's: one written up to a
			// tick after the hasher was made may read as older (racy, above).
			if !have[rel] || !fi.ModTime().Before(h.created.Add(-racyWindow)) {
				return errRelist // the exclude rules may have changed
			}
		}
		if have[rel] {
			files = append(files, rel)
		} else {
			fresh = append(fresh, rel)
		}
		return nil
	})
	if err != nil {
		return nil, false
	}
	if len(fresh) > 0 {
		ignored, err := h.ignores.Ignored(rootRelative(projectDir, fresh))
		if err != nil {
			return nil, false
		}
		for i, f := range fresh {
			if !ignored[i] {
				files = append(files, f)
			}
		}
	}
	slices.Sort(files)
	return files, true
}
