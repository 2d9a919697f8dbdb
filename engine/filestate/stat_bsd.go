//go:build darwin || freebsd || netbsd

package filestate

import (
	"io/fs"
	"syscall"
)

// inodeAndCtime returns fi's inode number and change time (ns), which a stat cache row must also
// match; macOS and these BSDs name the change time Ctimespec.
func inodeAndCtime(fi fs.FileInfo) (ino uint64, ctimeNs int64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino, st.Ctimespec.Nano()
	}
	return 0, 0
}
