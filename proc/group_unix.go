//go:build unix

package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// hasProcessGroups: the child leads a process group, which outlives it while any member does, so
// Run kills what is left of it even after reaping the child.
const hasProcessGroups = true

// newGroupAttr starts the child in a process group of its own.
func newGroupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// shellCommand runs script with /bin/sh -c.
func shellCommand(script string) (*exec.Cmd, error) {
	return exec.Command("/bin/sh", "-c", script), nil
}

// resumeGroup sends SIGCONT to the group pgid, so that a stopped group can act on a SIGTERM.
func resumeGroup(pgid int) { _ = KillGroup(pgid, syscall.SIGCONT) }

// fillUsage takes the CPU times and peak RSS from the reaped child's rusage.
func (r *Result) fillUsage(state *os.ProcessState) {
	if ru, ok := state.SysUsage().(*syscall.Rusage); ok && ru != nil {
		r.UserCPU = time.Duration(ru.Utime.Nano())
		r.SysCPU = time.Duration(ru.Stime.Nano())
		r.PeakRSSBytes = taskPeakRSS(maxRSSBytes(ru))
	}
}

// KillGroup sends sig to the process group pgid; ESRCH (already gone) is not an error. It refuses
// pgid <= 1 and vx's own group, which a bug must never turn into "signal everything".
func KillGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return fmt.Errorf("proc: refusing to signal process group %d", pgid)
	}
	if pgid == syscall.Getpgrp() {
		return fmt.Errorf("proc: refusing to signal vx's own process group %d", pgid)
	}
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("proc: send %s to process group %d: %w", sig, pgid, err)
	}
	return nil
}

// killPid sends sig to one process; ESRCH is not an error.
func killPid(pid int, sig syscall.Signal) error {
	if pid <= 1 || pid == os.Getpid() {
		return fmt.Errorf("proc: refusing to signal pid %d", pid)
	}
	if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("proc: send %s to pid %d: %w", sig, pid, err)
	}
	return nil
}
