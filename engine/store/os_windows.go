package store

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// processAlive reports whether a process with this pid runs: one that can be opened and is not
// signalled (a process handle is signalled once the process exited). A process vx may not open
// (another user's) counts as alive, as EPERM does on Unix.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return true
	}
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return errors.Is(err, windows.ERROR_ACCESS_DENIED)
	}
	defer windows.CloseHandle(h)
	event, err := windows.WaitForSingleObject(h, 0)
	return err != nil || event == uint32(windows.WAIT_TIMEOUT)
}

// writableFolder reports whether dir exists and is not read-only. Windows has no access(2): the
// read-only attribute, which Go reports as a mode without write bits, is the only check; an ACL
// that refuses writes shows when the index is opened.
func writableFolder(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.Mode().Perm()&0o222 != 0
}
