//go:build !unix

package testkit

import "testing"

// lockFile has no lock to take here: test binaries that build at once each build.
func lockFile(testing.TB, string) (unlock func()) { return func() {} }
