package proc

import (
	"os"
	"syscall"
)

// Parent is what a process knows, from its start, of the process that started it.
type Parent struct {
	pid int
	// deathSignal is the signal the kernel sends this process when its parent dies, which the
	// parent asked for (Spec.ParentDeathSignal); 0 for none.
	deathSignal syscall.Signal
}

// WatchParent records this process's parent and the death signal it asked for. Call it at the
// start of the process: Go's os/exec checks, between fork and exec, that the parent that asked for
// a death signal is still alive then (and sends the signal otherwise), so none is missed before.
func WatchParent() Parent {
	return Parent{pid: os.Getppid(), deathSignal: parentDeathSignal()}
}

// DeathSignal is the signal the kernel sends this process when its parent dies, as the parent
// asked (Spec.ParentDeathSignal, Linux's PR_SET_PDEATHSIG, kept across exec); 0 for none. The
// process must handle it (signal.Notify) to act on it.
func (p Parent) DeathSignal() syscall.Signal { return p.deathSignal }

// Died reports whether sig, just received, tells that the parent died: it is the death signal the
// parent asked for, and the parent would not send it otherwise. vx's parents ask for SIGHUP, which
// they never send. SIGTERM and SIGINT are also how a parent stops its children, so as death
// signals they count only once this process has been re-parented; that can miss a death: the
// kernel sends the signal as soon as the parent's thread that started this process exits, and
// until the parent's last thread has, this process is still its child.
func (p Parent) Died(sig os.Signal) bool {
	switch {
	case p.deathSignal == 0 || sig != p.deathSignal:
		return false
	case sig == syscall.SIGTERM || sig == syscall.SIGINT:
		return os.Getppid() != p.pid
	}
	return true
}
