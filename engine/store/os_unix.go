//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// writableFolder reports whether this process may create files in dir, and whether dir means to
// let anyone: root passes every permission check, but a folder without a write bit is read-only
// by intent.
func writableFolder(dir string) bool {
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm()&0o222 == 0 {
		return false
	}
	return unix.Access(dir, unix.W_OK) == nil
}
