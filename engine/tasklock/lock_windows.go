//go:build windows

package tasklock

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockOffset is the byte LockFileEx locks: far past the pid written at the file's start, since a
// locked range cannot be read by another process on Windows.
const lockOffset = 1 << 30

// tryLock takes f's exclusive lock without waiting; held says another handle holds it.
func tryLock(f *os.File) (held bool, err error) {
	ol := &windows.Overlapped{Offset: lockOffset}
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return true, nil
	}
	return false, err
}

func unlock(f *os.File) error {
	ol := &windows.Overlapped{Offset: lockOffset}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
}
