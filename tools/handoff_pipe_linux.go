package tools

import (
	"os"

	"golang.org/x/sys/unix"
)

// growPipe makes the pipe w writes to hold up to size bytes where the system allows (Linux's
// fs.pipe-max-size, 1 MiB by default): the server then writes a runTasks child's hand-off while
// the child starts, rather than taking turns with it 64 KiB at a time.
func growPipe(w *os.File, size int) {
	raw, err := w.SyscallConn()
	if err != nil {
		return
	}
	_ = raw.Control(func(fd uintptr) {
		for n := size; n >= 64<<10; n /= 2 {
			if _, err := unix.FcntlInt(fd, unix.F_SETPIPE_SZ, n); err == nil {
				return
			}
		}
	})
}
