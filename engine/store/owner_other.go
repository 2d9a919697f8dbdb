//go:build !unix

package store

import "os"

// CheckSharedFolder refuses a shared store folder that another user owns or that others may
// write; outside Unix the folder's access list is the system's to keep, and nothing is refused.
func CheckSharedFolder(dir string) error { return nil }

// makeSharedFolder creates dir and any missing parent.
func makeSharedFolder(dir string) error { return os.MkdirAll(dir, 0o755) }
