package tools

import (
	"os"

	"golang.org/x/sys/unix"
)

// handoffFile answers an anonymous file in memory (memfd) for a runTasks child's hand-off, and
// what closes it: the child reads it in a few large reads, where through a pipe of 64 KiB the
// server and the child took turns some twenty times for a workspace of 300 packages.
func handoffFile() (*os.File, func(), error) {
	fd, err := unix.MemfdCreate("vx-handoff", unix.MFD_CLOEXEC)
	if err != nil {
		return tempHandoffFile()
	}
	f := os.NewFile(uintptr(fd), "vx-handoff")
	return f, func() { f.Close() }, nil
}
