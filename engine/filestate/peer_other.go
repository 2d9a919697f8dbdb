//go:build unix && !linux && !darwin && !freebsd

package filestate

import (
	"errors"
	"net"
)

// maxSocketPath is the longest socket path these systems are sure to bind.
const maxSocketPath = 103

// peerUID cannot tell here: every answer is a doubt, and the asker scans.
func peerUID(net.Conn) (int, error) { return 0, errors.New("the peer's user cannot be told here") }

// peerConfined answers "": vx's sandbox confines tasks on Linux only (Landlock), and a task here
// reads what the socket answers anyway.
func peerConfined(net.Conn) (string, error) { return "", nil }
