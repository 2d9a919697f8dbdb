//go:build unix

package filestate

import (
	"os"
	"path/filepath"
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

// gitIndexOf answers the index file of the git repository holding dir, "" when there is none.
func gitIndexOf(dir string) string {
	gitDir := gitDirOf(dir)
	if gitDir == "" {
		return ""
	}
	return filepath.Join(gitDir, "index")
}
