package resources

import (
	"runtime"
	"strconv"
	"strings"

	"github.com/vzn/vx/engine/vxerr"
)

// Worker count sources, as vx info reports them: the --concurrency flag, VX_CONCURRENCY, or the
// default (the number of CPUs).
const (
	WorkersFromFlag = "flag"
	WorkersFromEnv  = "env"
	WorkersFromCPUs = "default"
)

// Workers answers how many tasks run at once and where that number came from: the --concurrency
// flag when positive, else VX_CONCURRENCY, else the number of CPUs.
func Workers(flag int, getenv func(string) string) (n int, source string, err error) {
	if flag > 0 {
		return flag, WorkersFromFlag, nil
	}
	if flag < 0 {
		return 0, "", vxerr.Usagef("--concurrency %d: want a positive number", flag)
	}
	if v := strings.TrimSpace(getenv("VX_CONCURRENCY")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return 0, "", vxerr.Usagef("VX_CONCURRENCY=%q: want a positive number", v)
		}
		return n, WorkersFromEnv, nil
	}
	return runtime.NumCPU(), WorkersFromCPUs, nil
}
