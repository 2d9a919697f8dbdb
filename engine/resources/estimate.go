package resources

import (
	"time"

	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/store"
)

// DefaultTaskMemory is what a task reserves when neither its history nor the workspace's
// (another task's recorded peak) nor taskMemory says more.
const DefaultTaskMemory = 512 << 20

// Reservation sources: a task's own recorded peak, the median of the others', taskMemory, or
// DefaultTaskMemory.
const (
	ReserveFromHistory = "history"
	ReserveFromMedian  = "median"
	ReserveFromConfig  = "config"
	ReserveFromDefault = "default"
)

// EstimateWindow is how many of a task's last executions that ran its command the scheduler
// plans from: their p50 (of those that passed) and their largest peak RSS.
const EstimateWindow = history.P50Window

// Estimates answers what the scheduler plans each task from, given its recent command runs (its
// last EstimateWindow executions that ran its command): the p50 of the durations of those that
// passed, for a task with one, and the largest peak RSS of them all.
func Estimates(recent map[string][]store.CommandRun) (p50s, peaks map[string]int64) {
	p50s = make(map[string]int64, len(recent))
	peaks = make(map[string]int64, len(recent))
	for id, runs := range recent {
		var passed []time.Duration
		var peak int64
		for _, c := range runs {
			if history.CountsForDuration(c.Status) {
				passed = append(passed, c.Duration)
			}
			peak = max(peak, c.PeakRSSBytes)
		}
		if len(passed) > 0 {
			p50s[id] = history.P50(passed)
		}
		peaks[id] = peak
	}
	return p50s, peaks
}
