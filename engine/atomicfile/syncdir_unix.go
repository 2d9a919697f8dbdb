//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"syscall"
)

// syncDir makes a rename or link in dir durable. A file system that cannot sync a folder (EINVAL,
// ENOTSUP) gives no more than it gives: that is not an error.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
		err = nil
	}
	return errors.Join(err, d.Close())
}
