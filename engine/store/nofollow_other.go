//go:build !unix

package store

import (
	"errors"
	"os"
)

var errNotRegular = errors.New("not a regular file")

// openNoFollow opens a file for reading, refusing a symlink (checked before opening: Windows has no
// O_NOFOLLOW).
func openNoFollow(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errNotRegular
	}
	return os.Open(path)
}
