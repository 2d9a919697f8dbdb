package watch

import (
	"regexp"
	"runtime"
	"strconv"
	"syscall"
	"testing"
)

// The hint never advises a limit at or below the current one: where the watch limit is reached
// after a few folders (other processes of the user hold the rest), it says to double the limit,
// not to set it to what those few folders need.
func TestLimitHintRaises(t *testing.T) {
	for _, c := range []struct{ need, current, atLeast int }{
		{10, 1 << 20, 2 << 20}, {100_000, 8192, 200_000}, {10, -1, 20}, {0, 0, 1},
	} {
		if got := raise(c.need, c.current); got < c.atLeast || got%65536 != 0 {
			t.Errorf("raise(%d, %d) = %d, want a multiple of 65,536 of at least %d", c.need, c.current, got, c.atLeast)
		}
	}
	if runtime.GOOS != "linux" {
		return
	}
	current := readInt("/proc/sys/fs/inotify/max_user_watches")
	if current < 0 {
		t.Skip("no inotify limit to read")
	}
	msg := limitError(syscall.ENOSPC, 3).Error()
	m := regexp.MustCompile(`max_user_watches=(\d+)$`).FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("no advice in %q", msg)
	}
	if advised, _ := strconv.Atoi(m[1]); advised <= current {
		t.Fatalf("advised %d, at or below the current limit %d: %s", advised, current, msg)
	}
}
