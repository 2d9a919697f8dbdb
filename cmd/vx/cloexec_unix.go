//go:build unix

package main

import "syscall"

// closeOnExec keeps fd from the processes vx starts.
func closeOnExec(fd int) { syscall.CloseOnExec(fd) }
