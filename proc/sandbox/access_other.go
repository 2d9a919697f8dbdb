//go:build !unix

package sandbox

// Writable reports whether this process could write path; without access(2), it assumes so.
func Writable(string) bool { return true }

// Readable reports whether this process could read path; without access(2), it assumes so.
func Readable(string) bool { return true }
