package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
)

// Reaper deals with orphans: descendants re-parented to this process (after BecomeSubreaper)
// because the process that started them died. It kills the live ones (KillOrphans) and reaps
// the dead ones (Reap), which otherwise stay zombies for as long as this process lives.
//
// An orphan is a child of this process that is outside this process's own group and that no Run
// given this Reaper (Spec.Reaper) is supervising. So children started with plain os/exec, which
// stay in this process's group, are never touched, and Run's children are left to Run; a child
// started in a group of its own in any other way would be taken for an orphan. Orphans in the group
// of a supervised child are left to that child's Run, which kills its group when the child exits.
//
// The zero Reaper is ready to use; it must not be copied after first use.
type Reaper struct {
	mu sync.Mutex
	// supervised holds the pids of the children Run started with this Reaper and has not reaped.
	supervised map[int]bool
}

// start starts cmd and records its pid under one lock, so that Reap never sees the child exited
// before it is known as supervised.
func (r *Reaper) start(cmd *exec.Cmd) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	if r.supervised == nil {
		r.supervised = make(map[int]bool)
	}
	r.supervised[cmd.Process.Pid] = true
	return nil
}

// forget is called once Run reaped pid.
func (r *Reaper) forget(pid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.supervised, pid)
}

// orphans lists the orphans among procs (see Reaper), zombies or live ones. r.mu must be held.
func (r *Reaper) orphans(procs []procInfo, zombies bool) []procInfo {
	self, ownGroup := os.Getpid(), ownGroupID()
	var found []procInfo
	for _, p := range procs {
		if p.ppid != self || p.pgid == ownGroup || r.supervised[p.pid] || p.zombie() != zombies {
			continue
		}
		if !zombies && r.supervised[p.pgid] {
			continue // left to the Run that supervises its group's leader
		}
		found = append(found, p)
	}
	return found
}

// Reap collects the exit status of every orphan that has exited, and returns their pids. It does
// not block. Call it after each supervised child finished and from time to time (or on SIGCHLD)
// in a subreaper.
func (r *Reaper) Reap() ([]int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	procs, err := readProcs()
	if err != nil {
		return nil, fmt.Errorf("proc: reap orphans: %w", err)
	}
	var reaped []int
	var errs []error
	for _, p := range r.orphans(procs, true) {
		got, err := reapIfExited(p.pid)
		switch {
		case errors.Is(err, syscall.ECHILD):
			// Reaped by someone else meanwhile.
		case err != nil:
			errs = append(errs, fmt.Errorf("proc: reap orphan %d: %w", p.pid, err))
		case got == p.pid:
			reaped = append(reaped, p.pid)
		}
	}
	slices.Sort(reaped)
	return reaped, errors.Join(errs...)
}

// KillOrphans sends sig to every live orphan, to the process group each leads, and to its live
// descendants, and returns the pids it signalled (not the groups). Processes that die of it stay
// zombies until Reap. With a signal other than SIGKILL, a caller that must be sure calls it again
// with SIGKILL after a grace period.
func (r *Reaper) KillOrphans(sig syscall.Signal) ([]int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	procs, err := readProcs()
	if err != nil {
		return nil, fmt.Errorf("proc: kill orphans: %w", err)
	}
	ownGroup := ownGroupID()
	groupOf := make(map[int]int, len(procs))
	for _, p := range procs {
		groupOf[p.pid] = p.pgid
	}
	var signalled []int
	var errs []error
	for _, o := range r.orphans(procs, false) {
		for _, pid := range append([]int{o.pid}, liveDescendants(procs, o.pid)...) {
			if slices.Contains(signalled, pid) {
				continue
			}
			if err := killPid(pid, sig); err != nil {
				errs = append(errs, err)
				continue
			}
			signalled = append(signalled, pid)
			if g := groupOf[pid]; g == pid && g != ownGroup && !r.supervised[g] {
				if err := KillGroup(g, sig); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	slices.Sort(signalled)
	return signalled, errors.Join(errs...)
}
