//go:build !unix && !windows

package taskmutex

import "os"

// lockFile is an open lock file.
type lockFile = *os.File

func openLock(path string) (lockFile, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
}

// tryLock always takes the lock where the system has no file locks (js, wasip1, plan9): vx runs
// there only as a library, one process at a time.
func tryLock(lockFile) (held bool, err error) { return false, nil }

func holder(lockFile) int { return 0 }

func closeLock(f lockFile) error { return f.Close() }
