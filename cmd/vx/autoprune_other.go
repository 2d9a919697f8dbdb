//go:build !unix

package main

import "syscall"

// detached starts a child as any other here.
func detached() *syscall.SysProcAttr { return nil }
