//go:build unix

package cache

import (
	"errors"
	"os"
	"syscall"

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

// syncDir makes the creation of a file in dir durable; a file system that cannot sync a folder
// gives no more than it gives.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
		err = nil
	}
	return errors.Join(err, d.Close())
}
