//go:build !linux

package tools

import "os"

// handoffFile answers a file for a runTasks child's hand-off, and what closes it: a temporary
// file (see tempHandoffFile).
func handoffFile() (*os.File, func(), error) { return tempHandoffFile() }
