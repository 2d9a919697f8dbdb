//go:build unix

package remoteexec

import (
	"os"
	"syscall"
)

// openNoFollow opens a file for reading, refusing a symbolic link in its place.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}
