//go:build unix

package taskmutex

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockFile is an open lock file: a bare descriptor, since a lock is taken for every task a run
// starts, and os.File's poller registration and finalizer are of no use to it.
type lockFile int

func openLock(path string) (lockFile, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return lockFile(fd), nil
	}
}

// tryLock takes f's exclusive flock without waiting; held says another open file holds it. The
// holder also takes a POSIX record lock on the file, which costs no write and which the kernel
// answers with the holder's pid to a process that asks (holder): flock, whose owner is the open
// file, is what excludes (two runs in one process exclude each other too); the record lock only
// names the process. Where the system ties the two together (the BSDs), the record lock is
// refused and the holder goes unnamed.
func tryLock(f lockFile) (held bool, err error) {
	for {
		err = unix.Flock(int(f), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if errors.Is(err, unix.EWOULDBLOCK) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	_ = unix.FcntlFlock(uintptr(f), unix.F_SETLK, &lk)
	return false, nil
}

// holder answers the pid of the process holding f's lock; 0 when it is not known.
func holder(f lockFile) int {
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	if err := unix.FcntlFlock(uintptr(f), unix.F_GETLK, &lk); err != nil || lk.Type == unix.F_UNLCK {
		return 0
	}
	return int(lk.Pid)
}

// closeLock closes f, which releases both its locks.
func closeLock(f lockFile) error {
	return unix.Close(int(f))
}
