//go:build !unix

package depversions

import "time"

// cpuTime is 0 here: only Unix has getrusage, and the cpu-ms/op metric then reads 0.
func cpuTime() time.Duration { return 0 }
