//go:build darwin || freebsd

package filestate

import (
	"errors"
	"net"

	"golang.org/x/sys/unix"
)

// maxSocketPath is the longest socket path these systems bind (sun_path holds 104 bytes).
const maxSocketPath = 103

// peerUID answers the user of the process at the other end of a unix socket.
func peerUID(c net.Conn) (int, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, errors.New("not a unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Xucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if credErr != nil {
		return 0, credErr
	}
	return int(cred.Uid), nil
}

// peerConfined answers "": vx's sandbox confines tasks on Linux only (Landlock), and a task here
// reads what the socket answers anyway.
func peerConfined(net.Conn) (string, error) { return "", nil }
