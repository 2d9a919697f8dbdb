//go:build !unix

package actor

import (
	"errors"
	"io"
	"os"
	"time"
)

// GuardStdout is not supported on this platform: vx mcp needs dup2.
func GuardStdout() (*os.File, error) {
	return nil, errors.New("actor: guarding stdout needs a unix system")
}

// interruptible returns In with a way to end a pending read when it has one.
func interruptible(in io.Reader) (io.Reader, func(), func()) {
	past := time.Unix(1, 0)
	if d, ok := in.(interface{ SetReadDeadline(time.Time) error }); ok && d.SetReadDeadline(time.Time{}) == nil {
		return in, func() { _ = d.SetReadDeadline(past) }, func() { _ = d.SetReadDeadline(time.Time{}) }
	}
	if c, ok := in.(io.Closer); ok {
		return in, func() { _ = c.Close() }, func() {}
	}
	return in, nil, func() {}
}
