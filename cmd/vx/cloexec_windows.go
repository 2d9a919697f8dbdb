package main

import "syscall"

// closeOnExec keeps fd, a handle on Windows (--events-fd passes the handle's value), from the
// processes vx starts.
func closeOnExec(fd int) { syscall.CloseOnExec(syscall.Handle(fd)) }

// setNonblock does nothing on Windows, where a handle is not made non-blocking after the fact.
func setNonblock(int) error { return nil }

// guardFromTasks does nothing on Windows: a child inherits only the handles os/exec lists for it.
func guardFromTasks() {}
