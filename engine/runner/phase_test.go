package runner

import (
	"testing"

	"github.com/vzn/vx/engine/store"
)

// The terminal phases are one to one the summary's statuses.
func TestTerminalPhasesAreStatuses(t *testing.T) {
	all := []store.Status{store.StatusHit, store.StatusMiss, store.StatusFailed, store.StatusBlocked,
		store.StatusSkipped, store.StatusTimedOut, store.StatusCancelled}
	seen := map[phase]store.Status{}
	for _, s := range all {
		p := endOf(s)
		if !p.ended() || endStatuses[p-endHit] != s {
			t.Errorf("status %s: phase %d, which reads back %q", s, p, endStatuses[p-endHit])
		}
		if other, dup := seen[p]; dup {
			t.Errorf("statuses %s and %s share phase %d", s, other, p)
		}
		seen[p] = s
	}
	if len(endStatuses) != len(all) {
		t.Errorf("%d terminal phases for %d statuses", len(endStatuses), len(all))
	}
	for p := waiting; p < endHit; p++ {
		if p.ended() {
			t.Errorf("phase %d ended", p)
		}
	}
}
