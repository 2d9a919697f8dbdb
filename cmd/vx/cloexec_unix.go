//go:build unix

package main

import (
	"fmt"
	"os"
	"syscall"

	"github.com/vzn/vx/proc"
)

// closeOnExec keeps fd from the processes vx starts.
func closeOnExec(fd int) { syscall.CloseOnExec(fd) }

// setNonblock makes reads of fd the runtime poller's, which closing its file interrupts.
func setNonblock(fd int) error { return syscall.SetNonblock(fd, true) }

// guardFromTasks keeps from every process vx starts what vx holds and was not meant for them:
// each descriptor vx inherited beyond stdin, stdout and stderr (proc.CloseInheritedOnExec), and
// on Linux its environment, memory and descriptors through /proc (proc.Undumpable). Called first
// thing in main, before vx opens or starts anything.
func guardFromTasks() {
	for _, err := range []error{proc.CloseInheritedOnExec(), proc.Undumpable()} {
		if err != nil {
			fmt.Fprintf(os.Stderr, "vx: %v\n", err)
		}
	}
}
