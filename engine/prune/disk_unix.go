//go:build unix

package prune

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// diskSize answers the size in bytes of the file system holding dir (or its nearest existing
// ancestor); 0 when it cannot tell.
func diskSize(dir string) int64 {
	for {
		var st unix.Statfs_t
		err := unix.Statfs(dir, &st)
		if err == nil {
			return int64(st.Blocks) * int64(st.Bsize)
		}
		parent := filepath.Dir(dir)
		if !os.IsNotExist(err) || parent == dir {
			return 0
		}
		dir = parent
	}
}
