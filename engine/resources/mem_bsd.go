//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package resources

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// totalMemoryBytes is the machine's RAM (sysctl hw.memsize on macOS, hw.physmem on the BSDs).
func totalMemoryBytes() (int64, error) {
	name := "hw.physmem"
	if runtime.GOOS == "darwin" {
		name = "hw.memsize"
	}
	n, err := unix.SysctlUint64(name)
	return int64(n), err
}

// availableMemoryBytes is the machine's RAM: vx reads no memory limit of its own here.
func availableMemoryBytes() (int64, bool, error) {
	total, err := totalMemoryBytes()
	return total, false, err
}
