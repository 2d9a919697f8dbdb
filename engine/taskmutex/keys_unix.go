//go:build unix

package taskmutex

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// writeAt writes b into f at off.
func writeAt(f lockFile, b []byte, off int64) error {
	for {
		_, err := unix.Pwrite(int(f), b, off)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// readAt reads f at off into b.
func readAt(f lockFile, b []byte, off int64) (int, error) {
	for {
		n, err := unix.Pread(int(f), b, off)
		if !errors.Is(err, unix.EINTR) {
			return max(n, 0), err
		}
	}
}

// sameFile reports whether f is the file path names now.
func sameFile(f lockFile, path string) bool {
	var open, named unix.Stat_t
	if unix.Fstat(int(f), &open) != nil || unix.Stat(path, &named) != nil {
		return false
	}
	return open.Dev == named.Dev && open.Ino == named.Ino
}

// lockOSFile answers a duplicate of f as an *os.File.
func lockOSFile(f lockFile, path string) *os.File {
	fd, err := unix.Dup(int(f))
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(fd), path)
}
