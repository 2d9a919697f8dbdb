//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

var errNotRegular = errors.New("not a regular file")

// openNoFollow opens a file for reading without following a final symlink and without blocking
// on a fifo.
func openNoFollow(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, errNotRegular
	}
	return f, err
}
