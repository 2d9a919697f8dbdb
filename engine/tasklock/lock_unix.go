//go:build unix

package tasklock

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// tryLock takes f's exclusive flock without waiting; held says another open file holds it. The
// holder also takes a POSIX record lock on the file, which costs no write and which the kernel
// answers with the holder's pid to a process that asks (holder): flock, whose owner is the open
// file, is what excludes (two runs in one process exclude each other too); the record lock only
// names the process. Where the system ties the two together (the BSDs), the record lock is
// refused and the holder goes unnamed.
func tryLock(f *os.File) (held bool, err error) {
	fd := int(f.Fd())
	for {
		err = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
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
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0}
	_ = unix.FcntlFlock(uintptr(fd), unix.F_SETLK, &lk)
	return false, nil
}

// holder answers the pid of the process holding f's lock; 0 when it is not known.
func holder(f *os.File) int {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0}
	if err := unix.FcntlFlock(f.Fd(), unix.F_GETLK, &lk); err != nil || lk.Type == unix.F_UNLCK {
		return 0
	}
	return int(lk.Pid)
}

func unlock(f *os.File) error {
	return unix.Flock(int(f.Fd()), unix.LOCK_UN)
}
