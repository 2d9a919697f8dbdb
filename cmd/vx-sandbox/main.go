// Command vx-sandbox is the supervisor vx starts each task under when it lies next to the vx
// executable: `vx-sandbox __supervise [--sandbox POLICY] [--report-fd N] -- PROGRAM [ARGS…]`
// (see proc.Supervisor and proc/sandbox). It is vx's own `vx __supervise` without the rest of vx,
// so that a task does not pay for vx's start (its package initialisation, its much larger binary).
package main

import (
	"fmt"
	"os"
	"syscall"

	"github.com/vzn/vx/proc"
	"github.com/vzn/vx/proc/sandbox"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != proc.SuperviseArg {
		fmt.Fprintf(os.Stderr, "vx-sandbox is started by vx, as %s %s [--sandbox POLICY] [--report-fd N] -- PROGRAM [ARGS…]\n",
			sandbox.HelperName, proc.SuperviseArg)
		os.Exit(2)
	}
	// syscall.Exit, as vx's own supervisor does: nothing to flush, and a race-enabled build would
	// otherwise sleep at exit.
	syscall.Exit(sandbox.Main(os.Args[2:]))
}
