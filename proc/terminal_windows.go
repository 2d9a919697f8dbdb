package proc

import (
	"io"
	"syscall"
)

// takeTerminal does nothing on Windows: a console has no foreground process group.
func takeTerminal(*syscall.SysProcAttr, io.Reader) (giveBack func()) { return func() {} }
