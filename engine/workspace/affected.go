package workspace

import (
	"context"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vzn/vx/engine/git"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/vxerr"
)

// affectedSince answers the projects touched by the files changed since the merge-base of HEAD
// with ref (default: the default branch, else HEAD), plus uncommitted and untracked files, and
// every project that depends on one of them, each with the reason, and the base it compared with
// (the ref, the default branch or HEAD). A change to the workspace config or the root package.json
// affects every project.
func affectedSince(ctx context.Context, ws *graph.Workspace, ref string) (map[string]string, string, error) {
	files, base, err := changedSinceBase(ctx, ws, ref)
	if err != nil {
		return nil, "", err
	}
	out := changedProjects(ws, files, base)
	direct := slices.Sorted(maps.Keys(out))
	for _, name := range direct {
		for _, dep := range projectClosure(ws, name, true) {
			if _, ok := out[dep]; !ok {
				out[dep] = fmt.Sprintf("depends on %s, which is affected", name)
			}
		}
	}
	return out, base, nil
}

// changedSinceBase lists the files changed since the merge-base of HEAD with ref, else the
// workspace's affectedBase, else the default branch (else HEAD), uncommitted and untracked files
// included, and names the base. A ref that git does not know is refused naming where it came from.
func changedSinceBase(ctx context.Context, ws *graph.Workspace, ref string) ([]string, string, error) {
	asker := gitAsker{noRepo: "--affected needs a git repository", noRef: fmt.Sprintf("--affected=%s: no such git ref", ref)}
	if ref == "" && ws.AffectedBase != "" {
		ref = ws.AffectedBase
		asker.noRef = fmt.Sprintf("affectedBase %q in %s: no such git ref", ref, ConfigFileName)
	}
	return changedFiles(ctx, ws.Root, ref, "", asker)
}

// changedProjects answers the projects holding one of the changed files (the file's deepest
// project), each with the reason naming the file and base. A change to the workspace config or
// the root package.json touches every project; a file in vx's own state folders touches none.
func changedProjects(ws *graph.Workspace, files []string, base string) map[string]string {
	out := map[string]string{}
	state := stateFolders(ws)
	for _, f := range files {
		if inFolders(f, state) {
			continue // the cache, the run history: vx's writing, never the user's change
		}
		if f == ConfigFileName || f == "package.json" {
			for _, p := range ws.Projects {
				if _, ok := out[p.Name]; !ok {
					out[p.Name] = fmt.Sprintf("%s changed since %s", f, base)
				}
			}
			continue
		}
		if p := owner(ws, f); p != nil {
			if _, ok := out[p.Name]; !ok {
				out[p.Name] = fmt.Sprintf("%s changed since %s", f, base)
			}
		}
	}
	return out
}

// stateFolders lists vx's state folders inside the workspace, relative to its root: the default
// .vx, and the state folder the workspace uses ($VX_CACHE_DIR) when it lies inside the root.
func stateFolders(ws *graph.Workspace) []string {
	folders := []string{".vx"}
	if ws.CacheDir == "" {
		return folders
	}
	rel, err := filepath.Rel(ws.Root, ws.CacheDir)
	if err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
		folders = append(folders, filepath.ToSlash(rel))
	}
	return folders
}

// inFolders reports whether the slash path file is one of folders or lies inside one.
func inFolders(file string, folders []string) bool {
	for _, d := range folders {
		if file == d || strings.HasPrefix(file, d+"/") {
			return true
		}
	}
	return false
}

// owner is the project whose folder holds the file (the deepest one).
func owner(ws *graph.Workspace, file string) *graph.Project {
	var best *graph.Project
	for _, p := range ws.Projects {
		if p.Dir == "." || file == p.Dir || strings.HasPrefix(file, p.Dir+"/") {
			if best == nil || len(p.Dir) > len(best.Dir) || best.Dir == "." {
				best = p
			}
		}
	}
	return best
}

// affectedBase reads `affectedBase` ("" when absent): the git ref --affected compares with when
// neither the flag nor VX_AFFECTED_BASE names one. Like a ref on the command line, it never
// starts with "-" and holds no space.
func affectedBase(r reader, top map[string]any) (string, error) {
	v, ok := top["affectedBase"]
	if !ok {
		return "", nil
	}
	ref, err := r.str("affectedBase", v)
	if err != nil {
		return "", err
	}
	if ref == "" || strings.HasPrefix(ref, "-") || strings.ContainsAny(ref, " \t\n") {
		return "", r.errAt("affectedBase", "affectedBase %q is not a git ref", ref)
	}
	return ref, nil
}

// gitAsker holds the refusals a git question answers with, each naming the flag that asked it.
type gitAsker struct {
	noRepo string // "… needs a git repository" (the root follows)
	noRef  string // "…: no such git ref"
}

// changedFiles lists the files (relative to root, slash-separated) changed between the
// merge-base of from and to and to, and names the range. With to "", it compares the merge-base
// of from and HEAD with the working tree, uncommitted and untracked files included; with from ""
// too, it compares with the default branch.
func changedFiles(ctx context.Context, root, from, to string, asker gitAsker) ([]string, string, error) {
	if _, err := git.Run(ctx, root, "rev-parse", "--is-inside-work-tree"); err != nil {
		return nil, "", vxerr.Usagef("%s at %s", asker.noRepo, root)
	}
	// A ref is never an option: git would read "--output=…" as one.
	if strings.HasPrefix(from, "-") {
		return nil, "", vxerr.Usagef("%s", asker.noRef)
	}
	if strings.HasPrefix(to, "-") {
		return nil, "", vxerr.Usagef("%s %s", asker.noRef, to)
	}
	if from == "" {
		from = defaultBranch(ctx, root)
	}
	head := to
	if head == "" {
		head = "HEAD"
	} else if !isCommit(ctx, root, to) {
		return nil, "", vxerr.Usagef("%s %s", asker.noRef, to)
	}
	base := ""
	if from != "" {
		mb, err := git.Run(ctx, root, "merge-base", from, head)
		if err != nil {
			if !isCommit(ctx, root, from) {
				if to != "" {
					return nil, "", vxerr.Usagef("%s %s", asker.noRef, from)
				}
				return nil, "", vxerr.Usagef("%s", asker.noRef)
			}
			return nil, "", fmt.Errorf("git merge-base %s %s: %w", from, head, err)
		}
		base = strings.TrimSpace(mb)
	}
	prefix, _ := git.Run(ctx, root, "rev-parse", "--show-prefix")
	prefix = strings.TrimSpace(prefix)
	seen := map[string]bool{}
	var files []string
	add := func(out string) {
		for _, line := range strings.Split(out, "\x00") {
			if line == "" {
				continue
			}
			// git paths are relative to the repository top; the workspace may sit below it.
			if prefix != "" {
				if !strings.HasPrefix(line, prefix) {
					continue
				}
				line = strings.TrimPrefix(line, prefix)
			}
			line = path.Clean(line)
			if !seen[line] {
				seen[line] = true
				files = append(files, line)
			}
		}
	}
	diff := []string{"diff", "--name-only", "-z", "--no-renames"}
	switch {
	case to != "":
		out, err := git.Run(ctx, root, append(diff, base, to, "--", ".")...)
		if err != nil {
			return nil, "", fmt.Errorf("git diff: %w", err)
		}
		add(out)
		return files, from + "..." + to, nil
	case base != "":
		out, err := git.Run(ctx, root, append(diff, base, "--", ".")...)
		if err != nil {
			return nil, "", fmt.Errorf("git diff: %w", err)
		}
		add(out)
	default:
		if out, err := git.Run(ctx, root, append(diff, "HEAD", "--", ".")...); err == nil {
			add(out)
		}
	}
	out, err := git.Run(ctx, root, "ls-files", "-z", "--others", "--exclude-standard", "--full-name", "--", ".")
	if err != nil {
		return nil, "", fmt.Errorf("git ls-files: %w", err)
	}
	add(out)
	label := from
	if label == "" {
		label = "HEAD"
	}
	return files, label, nil
}

// isCommit reports whether ref names a commit.
func isCommit(ctx context.Context, root, ref string) bool {
	_, err := git.Run(ctx, root, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	return err == nil
}

// defaultBranch is origin's HEAD, else a local main or master, else "" (compare with HEAD).
func defaultBranch(ctx context.Context, root string) string {
	if out, err := git.Run(ctx, root, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"); err == nil {
		return strings.TrimSpace(out)
	}
	for _, b := range []string{"main", "master"} {
		if _, err := git.Run(ctx, root, "rev-parse", "--verify", "--quiet", "refs/heads/"+b); err == nil {
			return b
		}
	}
	if _, err := git.Run(ctx, root, "rev-parse", "--verify", "--quiet", "HEAD"); err == nil {
		return "HEAD"
	}
	return ""
}
