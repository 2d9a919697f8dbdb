//go:build !linux

package resources

// CPUQuota answers the CPU quota vx runs under in cores; outside Linux vx reads none.
func CPUQuota() (cores float64, ok bool) { return 0, false }
