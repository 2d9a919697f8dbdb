//go:build !linux

package proc

// Undumpable does nothing outside Linux, whose /proc/PID/environ is what it guards.
func Undumpable() error { return nil }
