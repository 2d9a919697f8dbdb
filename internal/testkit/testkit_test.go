package testkit

import (
	"os"
	"testing"
)

// ShortenRaceExit adds the short exit sleep to what GORACE holds, and leaves a GORACE that names
// its own exit sleep alone.
func TestShortenRaceExit(t *testing.T) {
	for _, c := range []struct{ before, after string }{
		{"", "atexit_sleep_ms=10"},
		{"halt_on_error=1", "halt_on_error=1 atexit_sleep_ms=10"},
		{"atexit_sleep_ms=500 halt_on_error=1", "atexit_sleep_ms=500 halt_on_error=1"},
	} {
		t.Setenv("GORACE", c.before)
		ShortenRaceExit()
		if got := os.Getenv("GORACE"); got != c.after {
			t.Errorf("GORACE %q: ShortenRaceExit made it %q, want %q", c.before, got, c.after)
		}
	}
}
