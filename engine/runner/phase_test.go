package runner

import (
	"testing"

	"github.com/vzn/vx/engine/history"
)

// The terminal phases are one to one the summary's statuses.
func TestTerminalPhasesAreStatuses(t *testing.T) {
	all := []string{history.StatusHit, history.StatusMiss, history.StatusFailed, history.StatusBlocked,
		history.StatusSkipped, history.StatusTimedOut, history.StatusCancelled}
	seen := map[phase]string{}
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
