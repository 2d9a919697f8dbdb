//go:build !linux && !darwin && !freebsd && !netbsd

package filestate

import "io/fs"

// inodeAndCtime is 0, 0 here: Windows' os.Stat gives neither an inode number nor a change time
// (both need the file opened), so a stat cache row matches on size and mtime alone.
func inodeAndCtime(fs.FileInfo) (ino uint64, ctimeNs int64) { return 0, 0 }
