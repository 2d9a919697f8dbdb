//go:build !linux

package proc

import (
	"errors"
	"fmt"
	"syscall"
)

// BecomeSubreaper marks this process a child subreaper; only Linux has them.
func BecomeSubreaper() error {
	return fmt.Errorf("proc: child subreaper: %w", errors.ErrUnsupported)
}

type procInfo struct {
	pid, ppid, pgid int
	state           byte
}

func (p procInfo) zombie() bool { return p.state == 'Z' }

func readProcs() ([]procInfo, error) {
	return nil, fmt.Errorf("proc: list processes: %w", errors.ErrUnsupported)
}

func liveDescendants([]procInfo, int) []int { return nil }

func killTreeOf(int) error { return errors.ErrUnsupported }

func waitExited(int) bool { return false }

// setParentDeathSignal is Linux only; elsewhere the child outlives a killed parent.
func setParentDeathSignal(*syscall.SysProcAttr, syscall.Signal) {}

// parentDeathSignal: without PR_SET_PDEATHSIG, no parent asks for one.
func parentDeathSignal() syscall.Signal { return 0 }

// waitsUnreaped: waitExited cannot wait without reaping here (it needs Linux's waitid WNOWAIT),
// so Run reaps the child with os/exec before it stops watching ctx.
const waitsUnreaped = false
