//go:build unix

package proc

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
)

// CloseInheritedOnExec marks every open descriptor above stderr close-on-exec, so that what this
// process was handed without the flag (`exec 7>file; vx run`, a host's leaked socket) reaches no
// process it starts: os/exec passes a child stdin, stdout, stderr and ExtraFiles, but leaves open
// every descriptor the caller left without close-on-exec. Go opens its own files with the flag
// already; a descriptor meant for a child is passed through Spec.ExtraFiles (or
// syscall.ProcAttr.Files), which clears it for that child alone. Call it first thing in main, in
// every program that starts tasks.
func CloseInheritedOnExec() error {
	dir := "/dev/fd"
	if runtime.GOOS == "linux" {
		dir = "/proc/self/fd"
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("proc: list open descriptors: %w", err)
	}
	for _, e := range entries {
		// Among them is the listing's own descriptor, closed by now: marking it does no harm.
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
	return nil
}
