//go:build !unix && !windows

package cache

import "os"

// tryLock has no lock to take here: every journal reads as unowned.
func tryLock(*os.File) (unlock func(), ok bool) { return func() {}, true }
