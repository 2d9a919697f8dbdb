package history

import "time"

// P50 is the nearest-rank median of durations in milliseconds, as the plan computes it; 0 for none.
func P50(durations []time.Duration) int64 {
	if len(durations) == 0 {
		return 0
	}
	return percentile(durations, 50)
}
