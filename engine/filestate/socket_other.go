//go:build !unix

package filestate

import (
	"context"
	"errors"
	"path/filepath"
	"time"
)

// ErrServed says that another live process serves the workspace's file state.
var ErrServed = errors.New("another vx serves this workspace's file state")

// ErrNoServer says that no process serves the workspace's file state: the asker scans.
var ErrNoServer = errors.New("no vx watches this workspace")

// SocketPath answers where the socket would be.
func SocketPath(stateDir string) string { return filepath.Join(stateDir, "watch.sock") }

// Provider answers the snapshot a request gets.
type Provider func(ctx context.Context) (*Snapshot, error)

// Server is not served here: a run scans.
type Server struct{}

// Listen serves nothing here: the socket's peer checks need a unix system.
func Listen(string, string, Provider) (*Server, error) {
	return nil, errors.New("file state socket: not served on this system")
}

// Close does nothing.
func (*Server) Close() error { return nil }

// Ask answers ErrNoServer: a run scans.
func Ask(context.Context, string, string, time.Duration) (*Snapshot, error) { return nil, ErrNoServer }
