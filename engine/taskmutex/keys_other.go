//go:build !unix

package taskmutex

import "os"

// writeAt writes b into f at off.
func writeAt(f lockFile, b []byte, off int64) error {
	_, err := f.WriteAt(b, off)
	return err
}

// readAt reads f at off into b.
func readAt(f lockFile, b []byte, off int64) (int, error) {
	return f.ReadAt(b, off)
}

// sameFile reports whether f is the file path names now. An open file cannot be removed here
// (Windows), or no other process locks it (js, wasip1, plan9): it always is.
func sameFile(f lockFile, path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// lockOSFile answers f, whose lock a child does not inherit here: nil.
func lockOSFile(lockFile, string) *os.File { return nil }
