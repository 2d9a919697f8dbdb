//go:build !linux

package sandbox

import (
	"errors"
	"runtime"
	"syscall"
)

// errUnsupported is restrict's answer where there is no Landlock to apply.
var errUnsupported = errors.New("the sandbox needs Linux (Landlock)")

func restrict(Policy) error { return errUnsupported }

// Probe answers what this host enforces: nothing, elsewhere than Linux.
func Probe() Verdict {
	why := "needs Linux (Landlock, namespaces); this is " + runtime.GOOS
	return Verdict{OS: runtime.GOOS, NotEnforced: []string{"filesystem: " + why, "network: " + why}}
}

// Attr is nil elsewhere than Linux: there are no namespaces to make.
func Attr(Policy, Verdict) func(*syscall.SysProcAttr) { return nil }
