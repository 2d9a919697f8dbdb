//go:build windows

package taskmutex

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/windows"
)

// lockOffset is the byte LockFileEx locks: far past the pid written at the file's start, since a
// locked range cannot be read by another process on Windows.
const lockOffset = 1 << 30

// pidWidth is the width of the holder's pid at the start of the file: every holder writes the
// same number of bytes over the last one's, so the file is never truncated.
const pidWidth = 20

// lockFile is an open lock file.
type lockFile = *os.File

func openLock(path string) (lockFile, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
}

// tryLock takes f's exclusive lock without waiting; held says another handle holds it. The holder
// writes its pid into the file, for holder to read.
func tryLock(f *os.File) (held bool, err error) {
	ol := &windows.Overlapped{Offset: lockOffset}
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	_, _ = f.WriteAt(fmt.Appendf(nil, "%*d\n", pidWidth, os.Getpid()), 0)
	return false, nil
}

// holder answers the pid the holder of f's lock wrote; 0 when there is none yet.
func holder(f *os.File) int {
	buf := make([]byte, pidWidth+1)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// closeLock releases f's lock (if it holds it) and closes it.
func closeLock(f lockFile) error {
	ol := &windows.Overlapped{Offset: lockOffset}
	err := windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_NOT_LOCKED) {
		err = nil
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
