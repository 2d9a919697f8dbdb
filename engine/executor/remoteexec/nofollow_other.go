//go:build !unix

package remoteexec

import "os"

// openNoFollow opens a file for reading (a link in its place is followed on this system).
func openNoFollow(path string) (*os.File, error) { return os.Open(path) }
