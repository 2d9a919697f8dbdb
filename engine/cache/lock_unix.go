//go:build unix

package cache

import (
	"os"

	"golang.org/x/sys/unix"
)

// tryLock takes an exclusive advisory lock on f without waiting; ok is false when another
// process holds it. The kernel releases it when the process ends, however it ends.
func tryLock(f *os.File) (unlock func(), ok bool) {
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return nil, false
	}
	return func() { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN) }, true
}
