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

// SuperviseWith is the supervisor's main (see Supervisor); it needs Linux.
func SuperviseWith([]string, SuperviseOptions) int {
	fmt.Fprintf(os.Stderr, "vx %s: needs Linux (a child subreaper)\n", SuperviseArg)
	return exitSupervisorFailed
}

func superviseAttr(*syscall.SysProcAttr) {}
