package proc

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Undumpable makes this process non-dumpable (PR_SET_DUMPABLE 0): its /proc/PID files (environ,
// mem, fd, maps) become root's, so that a task running as the same user can read neither the
// environment vx was started with (its tokens included: unsetting a variable does not change
// /proc/PID/environ) nor its memory or descriptors, and cannot ptrace it; nor does it dump core.
// A process that execs is dumpable again, so the tasks vx starts are not affected. Root (with
// CAP_SYS_PTRACE) still reads it all.
func Undumpable() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("proc: PR_SET_DUMPABLE: %w", err)
	}
	return nil
}
