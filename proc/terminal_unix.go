//go:build unix

package proc

import (
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// takeTerminal sets attr so that the child's process group becomes the foreground group of the
// terminal stdin is, when it is one, and answers what gives the terminal back to vx's group (a
// no-op when it took nothing). Giving it back is done from a background group, which the
// kernel stops with SIGTTOU unless it is ignored for that moment.
func takeTerminal(attr *syscall.SysProcAttr, stdin io.Reader) (giveBack func()) {
	f, ok := stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return func() {}
	}
	fd := int(f.Fd())
	attr.Setpgid, attr.Foreground, attr.Ctty = true, true, fd
	return func() {
		signal.Ignore(syscall.SIGTTOU)
		defer signal.Reset(syscall.SIGTTOU)
		_ = unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, syscall.Getpgrp())
	}
}
