package cache

import (
	"os"

	"golang.org/x/sys/windows"
)

// tryLock takes an exclusive lock on f without waiting; ok is false when another process holds
// it. Windows releases it when the process ends, however it ends.
func tryLock(f *os.File) (unlock func(), ok bool) {
	h := windows.Handle(f.Fd())
	ol := new(windows.Overlapped)
	if err := windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol); err != nil {
		return nil, false
	}
	return func() { _ = windows.UnlockFileEx(h, 0, 1, 0, ol) }, true
}
