//go:build unix

package main

import (
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestWatchInputEditedWhileItRuns: under vx watch, a build that read an edit made while it ran
// is not cached under the key it started with (back at that version, the build runs again), and
// a build whose input was edited and put back while it ran is run again, though its key did not
// move.
func TestWatchInputEditedWhileItRuns(t *testing.T) {
	t.Parallel()
	w := newTOCTOU(t)
	w.close(t)
	// The debounce outlasts the build's end after an edit: the run is not stopped by the edit.
	lines := startWatch(t, w.dir, w.env(), "build", "--debounce", "1500ms")
	t.Cleanup(func() {
		_ = lines.cmd.Process.Signal(syscall.SIGINT)
		for range lines.lines {
		}
		_ = lines.cmd.Wait()
	})

	// Run 1 starts at v2 and reads v3.
	w.waitFor(t, "started")
	w.input(t, "v3\n")
	w.open()
	lines.next(t, `^run 1 \(first run\) re-ran a#build: 1 miss`)
	// The lines before run 1's end are all read by now: the notice is among the tasks' lines.
	var other []string
	for drained := false; !drained; {
		select {
		case l := <-lines.other:
			other = append(other, l)
		default:
			drained = true
		}
	}
	if !slices.ContainsFunc(other, func(l string) bool {
		return strings.HasSuffix(l, "a#build: not cached: src/in.txt changed while it ran")
	}) {
		t.Errorf("vx watch does not say which input changed during run 1:\n%s", strings.Join(append(lines.seen, other...), "\n"))
	}
	lines.next(t, `^run 2 \(packages/a/src/in.txt changed\) re-ran a#build: 1 miss`)
	// Back at v2: no entry of v2's key holds v3's output.
	w.input(t, "v2\n")
	if line := lines.next(t, `^run 3 \(.*\) .*; watching$`)[0]; !strings.Contains(line, "1 miss") || w.output(t) != "v2\n" {
		t.Fatalf("back at v2: %q with output %q, want a miss that outputs v2", line, w.output(t))
	}

	// Run 4 starts at v5, reads v6 and sees v5 put back before it ends: its key did not move,
	// but its output is v6's; vx watch runs it again.
	w.close(t)
	w.input(t, "v5\n")
	w.waitFor(t, "started")
	w.input(t, "v6\n")
	w.openGate(t, "go")
	w.waitFor(t, "read")
	w.input(t, "v5\n")
	w.openGate(t, "go2")
	lines.next(t, `^run 4 \(packages/a/src/in.txt changed\) re-ran a#build: 1 miss`)
	if line := lines.next(t, `^run 5 \(.*\) .*; watching$|no task's key moved`)[0]; !strings.Contains(line, "run 5 (packages/a/src/in.txt changed) re-ran a#build: 1 miss") {
		t.Fatalf("after a build whose input moved while it ran: %q, want it run again", line)
	}
	if got := w.output(t); got != "v5\n" {
		t.Fatalf("after the build ran again: output %q, want v5", got)
	}
}
