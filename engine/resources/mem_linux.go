package resources

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// totalMemoryBytes is the machine's RAM (sysinfo(2)).
func totalMemoryBytes() (int64, error) {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0, err
	}
	return int64(si.Totalram) * int64(si.Unit), nil
}

// availableMemoryBytes is the memory vx's tasks may use: the machine's RAM, or the memory limit
// of the cgroup vx runs in when that is lower (fromCgroup). Both are fixed figures, not what is
// free this instant, so that a plan made now and a run made next predict the same schedule; the
// reservations are each task's worst recent peak, which leaves the headroom.
func availableMemoryBytes() (n int64, fromCgroup bool, err error) {
	n, err = totalMemoryBytes()
	if err != nil {
		return 0, false, err
	}
	if limit, ok := cgroupLimit(); ok && limit < n {
		return limit, true, nil
	}
	return n, false, nil
}

// cgroupLimit answers the memory limit of vx's cgroup: cgroup v2's memory.max, else v1's
// memory.limit_in_bytes. ok is false without a limit.
func cgroupLimit() (int64, bool) {
	rel, relV1 := "/", "/"
	if data, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if p, ok := strings.CutPrefix(line, "0::"); ok {
				rel = p
			}
			if _, p, ok := strings.Cut(line, ":memory:"); ok {
				relV1 = p
			}
		}
	}
	read := func(path string) (int64, bool) {
		data, err := os.ReadFile(path)
		if err != nil {
			return 0, false
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		return n, err == nil && n > 0
	}
	for _, dir := range []string{"/sys/fs/cgroup" + rel, "/sys/fs/cgroup"} {
		if limit, ok := read(dir + "/memory.max"); ok {
			return limit, true
		}
	}
	for _, dir := range []string{"/sys/fs/cgroup/memory" + relV1, "/sys/fs/cgroup/memory"} {
		if limit, ok := read(dir + "/memory.limit_in_bytes"); ok && limit < 1<<60 {
			return limit, true
		}
	}
	return 0, false
}
