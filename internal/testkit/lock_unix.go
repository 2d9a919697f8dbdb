//go:build unix

package testkit

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// lockFile takes an exclusive lock on the file at p (made if need be), waiting for another
// process that holds it; the kernel releases it when the process ends, however it ends.
func lockFile(t testing.TB, p string) (unlock func()) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("lock %s: %v", p, err)
	}
	return func() { f.Close() }
}
