package watch

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"

	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/git"
)

// gitState is what the watcher knows of the git repository the workspace is in. It is set before
// any goroutine starts and never changed.
type gitState struct {
	// on is set in a git work tree: visibility is git's, else every file is visible.
	on bool
	// gitDir holds the index; infoDir the repository's exclude file. Events naming either mean
	// that what git shows may have changed everywhere.
	gitDir, infoDir string
	// above are the folders from the work tree's top down to the root's parent (none when the
	// root is the top): their .gitignore files rule the workspace's files too.
	above map[string]bool
}

// newGitState finds the repository of root and watches the folders of its index and exclude file.
func newGitState(ctx context.Context, root string, fsw *fsnotify.Watcher) gitState {
	out, err := git.Run(ctx, root, "rev-parse", "--is-inside-work-tree", "--absolute-git-dir", "--git-common-dir", "--show-toplevel")
	if err != nil {
		return gitState{}
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 4 || lines[0] != "true" {
		return gitState{}
	}
	g := gitState{on: true, gitDir: filepath.Clean(lines[1])}
	common := lines[2]
	if !filepath.IsAbs(common) {
		common = filepath.Join(root, common)
	}
	g.infoDir = filepath.Join(filepath.Clean(common), "info")
	// Without these two watches an index or exclude change would go unseen: then every
	// visibility is git's answer at the moment it was asked, which a full relist refreshes.
	_ = fsw.Add(g.gitDir)
	_ = fsw.Add(g.infoDir)
	g.above = foldersAbove(root, filepath.Clean(lines[3]))
	for dir := range g.above {
		// Its .gitignore's events only: anything else in it lies outside the workspace.
		_ = fsw.Add(dir)
	}
	return g
}

// foldersAbove answers the folders from top down to root's parent, root lying under top; none
// when root is top or does not lie under it.
func foldersAbove(root, top string) map[string]bool {
	rel, err := filepath.Rel(top, root)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil
	}
	above := map[string]bool{}
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		above[d] = true
		if d == top || filepath.Dir(d) == d {
			return above
		}
	}
}

// relists reports whether an event's path is git's index or exclude file (or in their folders'
// own), after which every visibility is asked again.
func (g gitState) relists(name string) bool {
	if !g.on {
		return false
	}
	dir, base := filepath.Split(name)
	dir = filepath.Clean(dir)
	switch dir {
	case g.gitDir:
		return base == "index"
	case g.infoDir:
		return base == "exclude"
	}
	if g.above[dir] && base == ".gitignore" {
		return true
	}
	return name == g.gitDir || name == g.infoDir
}

// inGitDir reports whether an absolute path lies in the repository's own folders, which the
// mirror never holds.
func (g gitState) inGitDir(name string) bool {
	return g.on && (name == g.gitDir || strings.HasPrefix(name, g.gitDir+string(filepath.Separator)))
}

// visibleSet answers which of the files under the root-relative paths specs git would show
// (all of them: specs empty), as a set of root-relative paths.
func (g gitState) visibleSet(ctx context.Context, root, stateDir string, specs []string) (map[string]bool, error) {
	files, err := filestate.LsFiles(ctx, root, stateDir, specs...)
	if err != nil {
		return nil, err
	}
	set := make(map[string]bool, len(files))
	for _, f := range files {
		set[strings.TrimSuffix(f, "/")] = true
	}
	return set, nil
}
