//go:build unix

package filestate

import (
	"os"
	"path/filepath"
	"strings"
)

// Bounds of the answer an asker takes: a snapshot holds, per tracked file, less than four times
// what git's index holds for it (its name, stamps and hash against the index's name, stamps and
// object id), and untracked files and folders besides, which baseAnswer covers.
const (
	baseAnswer   = 64 << 20
	perIndexByte = 4
)

// answerLimit answers the largest answer a watcher of the workspace at root can give: baseAnswer
// plus four times the size of the index of the git repository root is in (baseAnswer alone
// outside git), never more than maxAnswer. A larger one is not a snapshot of this workspace.
func answerLimit(root string) int64 {
	index := gitIndexOf(root)
	if index == "" {
		return baseAnswer
	}
	fi, err := os.Stat(index)
	if err != nil {
		return baseAnswer
	}
	return min(baseAnswer+perIndexByte*fi.Size(), maxAnswer)
}

// gitIndexOf answers the index file of the git repository holding dir (found as git does: the
// nearest .git folder, or .git file naming one, above it), "" when there is none.
func gitIndexOf(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		dotGit := filepath.Join(d, ".git")
		fi, err := os.Stat(dotGit)
		switch {
		case err == nil && fi.IsDir():
			return filepath.Join(dotGit, "index")
		case err == nil && fi.Mode().IsRegular():
			data, err := os.ReadFile(dotGit)
			if err != nil {
				return ""
			}
			gitDir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
			if !ok {
				return ""
			}
			if !filepath.IsAbs(gitDir) {
				gitDir = filepath.Join(d, gitDir)
			}
			return filepath.Join(gitDir, "index")
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}
