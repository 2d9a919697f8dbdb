//go:build unix

package sandbox

import (
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Writable reports whether this process, unsandboxed, could write path (or create it, for a path
// that does not exist: in its nearest folder that does). A denial of a path it could not write
// anyway is the system's, not the sandbox's.
func Writable(path string) bool {
	for {
		err := unix.Access(path, unix.W_OK)
		if err != unix.ENOENT && err != unix.ENOTDIR {
			return err == nil
		}
		parent := filepath.Dir(path)
		if parent == path {
			return false
		}
		path = parent
	}
}

// Readable reports whether this process, unsandboxed, could read path. A denial of a path it could
// not read anyway is the system's, not the sandbox's.
func Readable(path string) bool {
	return unix.Access(path, unix.R_OK) == nil
}
