//go:build unix

package actor

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// GuardStdout duplicates fd 1 for the reply stream and points fd 1 at fd 2 (dup2),
// returning the reply file. From then on nothing else in the process — a print to
// standard output, a raw write to fd 1, a child inheriting its standard output —
// can reach the reply stream: it all lands on stderr. The duplicate is close-on-exec, so no child
// inherits it, and non-blocking when it is a pipe or socket, so a write deadline
// can bound the last flush to a client that stopped reading.
func GuardStdout() (*os.File, error) {
	fd, err := unix.FcntlInt(1, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, fmt.Errorf("actor: duplicating stdout: %w", err)
	}
	if err := unix.Dup2(2, 1); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("actor: pointing stdout at stderr: %w", err)
	}
	if isPipeOrSocket(fd) {
		_ = unix.SetNonblock(fd, true)
		growPipe(fd)
	}
	return os.NewFile(uintptr(fd), "mcp-replies"), nil
}

func isPipeOrSocket(fd int) bool {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return false
	}
	mode := st.Mode & unix.S_IFMT
	return mode == unix.S_IFIFO || mode == unix.S_IFSOCK
}

func isCharDevice(fd int) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR
}

// interruptible returns the reader Serve reads In through, a function that makes
// a pending Read return (nil when In offers no way), and a function releasing
// what interruptible set up. A blocking *os.File (stdin is one) is read through a
// non-blocking duplicate registered with the runtime poller, whose read deadline
// can end a pending read; the original blocking mode is restored on release.
func interruptible(in io.Reader) (io.Reader, func(), func()) {
	past := time.Unix(1, 0)
	if f, ok := in.(*os.File); ok {
		if f.SetReadDeadline(time.Time{}) == nil {
			return f, func() { _ = f.SetReadDeadline(past) }, func() { _ = f.SetReadDeadline(time.Time{}) }
		}
		if nf := pollableDup(f); nf != nil {
			return nf, func() { _ = nf.SetReadDeadline(past) }, func() {
				if rc, err := nf.SyscallConn(); err == nil {
					_ = rc.Control(func(fd uintptr) { _ = unix.SetNonblock(int(fd), false) })
				}
				_ = nf.Close()
			}
		}
		return f, nil, func() {}
	}
	if d, ok := in.(interface{ SetReadDeadline(time.Time) error }); ok {
		return in, func() { _ = d.SetReadDeadline(past) }, func() { _ = d.SetReadDeadline(time.Time{}) }
	}
	if c, ok := in.(io.Closer); ok {
		return in, func() { _ = c.Close() }, func() {}
	}
	return in, nil, func() {}
}

// pollableDup returns a non-blocking, pollable duplicate of f's descriptor, or nil
// when f is not a pipe, socket or terminal (a regular file or /dev/null ends by
// itself and needs no interrupting).
func pollableDup(f *os.File) *os.File {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	nfd := -1
	_ = rc.Control(func(fd uintptr) {
		if !isPipeOrSocket(int(fd)) && !isCharDevice(int(fd)) {
			return
		}
		if d, err := unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 3); err == nil {
			nfd = d
		}
	})
	if nfd < 0 {
		return nil
	}
	if err := unix.SetNonblock(nfd, true); err != nil {
		_ = unix.Close(nfd)
		return nil
	}
	nf := os.NewFile(uintptr(nfd), f.Name())
	if nf.SetReadDeadline(time.Time{}) != nil { // the poller refused it (e.g. /dev/null)
		_ = unix.SetNonblock(nfd, false)
		_ = nf.Close()
		return nil
	}
	return nf
}
