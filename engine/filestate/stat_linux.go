package filestate

import (
	"io/fs"
	"syscall"
)

// inodeAndCtime returns fi's inode number and change time (ns), which a stat cache row must also
// match: a rename over the file or a write that restores its mtime changes one of them.
func inodeAndCtime(fi fs.FileInfo) (ino uint64, ctimeNs int64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino, st.Ctim.Sec*1e9 + st.Ctim.Nsec
	}
	return 0, 0
}
