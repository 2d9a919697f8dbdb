//go:build !unix

package watch

// openFileLimit cannot tell here.
func openFileLimit() int { return -1 }
