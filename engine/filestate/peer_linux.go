package filestate

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// maxSocketPath is the longest socket path Linux binds (sun_path holds 108 bytes with its NUL).
const maxSocketPath = 107

// peerUID answers the user of the process at the other end of a unix socket.
func peerUID(c net.Conn) (int, error) {
	cred, _, err := peerCred(c, false)
	if err != nil {
		return 0, err
	}
	return int(cred.Uid), nil
}

// peerCred answers the credentials of the process at the other end of a unix socket and, with
// pidfd set and where the kernel gives one (SO_PEERPIDFD), a pidfd of it (else -1), which the
// caller closes.
func peerCred(c net.Conn, pidfd bool) (*unix.Ucred, int, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil, -1, errors.New("not a unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return nil, -1, err
	}
	var cred *unix.Ucred
	var credErr error
	fd := -1
	if err := raw.Control(func(sock uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(sock), unix.SOL_SOCKET, unix.SO_PEERCRED)
		if pidfd {
			if p, err := unix.GetsockoptInt(int(sock), unix.SOL_SOCKET, unix.SO_PEERPIDFD); err == nil {
				fd = p
			}
		}
	}); err != nil {
		return nil, -1, err
	}
	if credErr != nil {
		if fd >= 0 {
			unix.Close(fd)
		}
		return nil, -1, credErr
	}
	return cred, fd, nil
}

// peerConfined answers why the process at the other end of c is confined as vx's sandbox confines
// a task ("" when it is not): it runs in another network namespace than this process (a task
// without network gets one of its own), or with no_new_privs where this process runs without (the
// sandbox sets it before its Landlock domain). Both are inherited by every child and cannot be
// undone, so a task's children are told apart too. An error (the peer's /proc unreadable, the
// peer gone before it was read) is a refusal as well. The peer's pid is read from its pidfd's
// process while that lives, so that a pid reused after the peer ended is not taken for it.
func peerConfined(c net.Conn) (string, error) {
	cred, pidfd, err := peerCred(c, true)
	if err != nil {
		return "", err
	}
	if pidfd >= 0 {
		defer unix.Close(pidfd)
	}
	reason, err := confined(int(cred.Pid))
	if err == nil && pidfd >= 0 {
		if err := unix.PidfdSendSignal(pidfd, 0, nil, 0); err != nil {
			return "", fmt.Errorf("the asking process ended: %w", err)
		}
	}
	return reason, err
}

// confined answers why the process pid is confined as a sandboxed task is, "" when it is not.
func confined(pid int) (string, error) {
	if pid <= 0 {
		return "", errors.New("the asking process is not known")
	}
	proc := "/proc/" + strconv.Itoa(pid)
	own, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		return "", fmt.Errorf("read this process's network namespace: %w", err)
	}
	theirs, err := os.Readlink(proc + "/ns/net")
	if err != nil {
		return "", fmt.Errorf("read the asking process's network namespace: %w", err)
	}
	if own != theirs {
		return "the asking process runs in a network namespace of its own, as a sandboxed task does", nil
	}
	ownNNP, err := noNewPrivs("/proc/self")
	if err != nil {
		return "", err
	}
	theirNNP, err := noNewPrivs(proc)
	if err != nil {
		return "", err
	}
	if theirNNP && !ownNNP {
		return "the asking process runs with no_new_privs, as a sandboxed task does", nil
	}
	return "", nil
}

// noNewPrivs reports whether the process whose /proc folder is proc has no_new_privs set.
func noNewPrivs(proc string) (bool, error) {
	data, err := os.ReadFile(proc + "/status")
	if err != nil {
		return false, fmt.Errorf("read %s/status: %w", proc, err)
	}
	for line := range bytes.Lines(data) {
		if v, ok := bytes.CutPrefix(line, []byte("NoNewPrivs:")); ok {
			return string(bytes.TrimSpace(v)) == "1", nil
		}
	}
	return false, fmt.Errorf("%s/status says nothing of NoNewPrivs", proc)
}
