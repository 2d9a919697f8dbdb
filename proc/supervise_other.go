//go:build !linux

package proc

import (
	"fmt"
	"os"
	"syscall"
)

// supervisorSupported: only Linux has subreapers; elsewhere Run starts the child directly, and
// the child's process group is all that holds its tree together.
const supervisorSupported = false

// Supervise is the supervisor's main (see Supervisor); it needs Linux.
func Supervise(args []string) int {
	fmt.Fprintf(os.Stderr, "vx %s: needs Linux (a child subreaper)\n", SuperviseArg)
	return exitSupervisorFailed
}

// SuperviseWith is Supervise with options; it needs Linux.
func SuperviseWith(args []string, _ SuperviseOptions) int { return Supervise(args) }

func superviseAttr(*syscall.SysProcAttr) {}
