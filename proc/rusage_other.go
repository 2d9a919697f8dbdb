//go:build unix && !linux

package proc

import "syscall"

// maxRSSBytes: BSDs and macOS report ru_maxrss in bytes already (macOS) or kB (BSDs); vx targets
// Linux, so the value is passed on as it is.
func maxRSSBytes(ru *syscall.Rusage) int64 { return int64(ru.Maxrss) }

// taskPeakRSS is the child's peak as its rusage says it (see the Linux build).
func taskPeakRSS(childPeak int64) int64 { return childPeak }
