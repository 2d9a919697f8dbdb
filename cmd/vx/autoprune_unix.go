//go:build unix

package main

import "syscall"

// detached starts a child in a session of its own: no terminal's signal reaches it.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
