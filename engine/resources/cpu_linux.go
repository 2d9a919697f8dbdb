package resources

import (
	"os"
	"slices"
	"strconv"
	"strings"
)

// CPUQuota answers the CPU quota of vx's cgroup in cores (cgroup v2's cpu.max, else v1's
// cpu.cfs_quota_us over cpu.cfs_period_us); ok is false when no quota binds.
func CPUQuota() (cores float64, ok bool) {
	rel, relV1 := "/", "/"
	if data, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if p, found := strings.CutPrefix(line, "0::"); found {
				rel = p
			}
			if parts := strings.SplitN(line, ":", 3); len(parts) == 3 && slices.Contains(strings.Split(parts[1], ","), "cpu") {
				relV1 = parts[2]
			}
		}
	}
	for _, dir := range []string{"/sys/fs/cgroup" + rel, "/sys/fs/cgroup"} {
		if data, err := os.ReadFile(dir + "/cpu.max"); err == nil {
			quota, period, _ := strings.Cut(strings.TrimSpace(string(data)), " ")
			return quotaCores(quota, period)
		}
	}
	for _, dir := range []string{"/sys/fs/cgroup/cpu" + relV1, "/sys/fs/cgroup/cpu,cpuacct" + relV1, "/sys/fs/cgroup/cpu"} {
		quota, qerr := os.ReadFile(dir + "/cpu.cfs_quota_us")
		period, perr := os.ReadFile(dir + "/cpu.cfs_period_us")
		if qerr == nil && perr == nil {
			return quotaCores(strings.TrimSpace(string(quota)), strings.TrimSpace(string(period)))
		}
	}
	return 0, false
}

// quotaCores is a quota over a period, in cores; "max" or a negative quota is none.
func quotaCores(quota, period string) (float64, bool) {
	q, qerr := strconv.ParseFloat(quota, 64)
	p, perr := strconv.ParseFloat(period, 64)
	if qerr != nil || perr != nil || q <= 0 || p <= 0 {
		return 0, false
	}
	return q / p, true
}
