//go:build unix

package watch

import "syscall"

// openFileLimit answers the process's soft limit of open files.
func openFileLimit() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return -1
	}
	return int(r.Cur)
}
