package resources

import (
	"testing"
	"time"

	"github.com/vzn/vx/engine/store"
)

// A task's p50 counts only the runs that passed; its peak is the largest of them all; a task
// whose runs all failed has a peak and no p50.
func TestEstimates(t *testing.T) {
	recent := map[string][]store.CommandRun{
		"p#a": {{Status: store.StatusMiss, Duration: time.Second, PeakRSSBytes: 10},
			{Status: store.StatusFailed, Duration: time.Hour, PeakRSSBytes: 30},
			{Status: store.StatusMiss, Duration: 3 * time.Second, PeakRSSBytes: 20}},
		"p#b": {{Status: store.StatusFailed, Duration: time.Second, PeakRSSBytes: 5}},
	}
	p50s, peaks := Estimates(recent)
	if _, ok := p50s["p#b"]; ok || p50s["p#a"] <= 0 || p50s["p#a"] > (3*time.Second).Milliseconds() {
		t.Errorf("p50s %v", p50s)
	}
	if peaks["p#a"] != 30 || peaks["p#b"] != 5 {
		t.Errorf("peaks %v", peaks)
	}
}
