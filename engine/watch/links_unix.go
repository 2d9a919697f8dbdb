//go:build unix

package watch

import (
	"io/fs"
	"syscall"
)

// linkCount answers how many names a file has (its hard links), 1 when the OS does not say.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
