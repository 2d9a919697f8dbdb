//go:build unix

package main

import (
	"bufio"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// watchLines is a running vx watch's stderr, line by line.
type watchLines struct {
	lines chan string
	seen  []string
}

// next waits for a line matching pattern and answers it.
func (w *watchLines) next(t *testing.T, pattern string) string {
	t.Helper()
	re := regexp.MustCompile(pattern)
	timeout := time.After(90 * time.Second)
	for {
		select {
		case line, ok := <-w.lines:
			if !ok {
				t.Fatalf("vx watch ended before %q; it said:\n%s", pattern, strings.Join(w.seen, "\n"))
			}
			w.seen = append(w.seen, line)
			if re.MatchString(line) {
				return line
			}
		case <-timeout:
			t.Fatalf("no line %q; vx watch said:\n%s", pattern, strings.Join(w.seen, "\n"))
		}
	}
}

// TestWatchInputEditedWhileItRuns: under vx watch, a build that read an edit made while it ran
// is not cached under the key it started with (back at that version, the build runs again), and
// a build whose input was edited and put back while it ran is run again, though its key did not
// move.
func TestWatchInputEditedWhileItRuns(t *testing.T) {
	t.Parallel()
	w := newTOCTOU(t)
	w.close(t)
	// The debounce outlasts the build's end after an edit: the run is not stopped by the edit.
	cmd := vxCommand(t, w.dir, "watch", "build", "--debounce", "1500ms")
	cmd.Env = append(cmd.Env, w.env()...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := &watchLines{lines: make(chan string, 1024)}
	go func() {
		defer close(lines.lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		for range lines.lines {
		}
		_ = cmd.Wait()
	})

	// Run 1 starts at v2 and reads v3.
	w.waitFor(t, "started")
	w.input(t, "v3\n")
	w.open()
	lines.next(t, `^vx watch: run 1 \(first run\) re-ran a#build: 1 miss`)
	if !slices.ContainsFunc(lines.seen, func(l string) bool {
		return strings.HasSuffix(l, "a#build: not cached: src/in.txt changed while it ran")
	}) {
		t.Errorf("vx watch does not say which input changed during run 1:\n%s", strings.Join(lines.seen, "\n"))
	}
	lines.next(t, `^vx watch: run 2 \(packages/a/src/in.txt changed\) re-ran a#build: 1 miss`)
	// Back at v2: no entry of v2's key holds v3's output.
	w.input(t, "v2\n")
	if line := lines.next(t, `^vx watch: run 3 \(.*\) .*; watching$`); !strings.Contains(line, "1 miss") || w.output(t) != "v2\n" {
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
	lines.next(t, `^vx watch: run 4 \(packages/a/src/in.txt changed\) re-ran a#build: 1 miss`)
	if line := lines.next(t, `^vx watch: run 5 \(.*\) .*; watching$|no task's key moved`); !strings.Contains(line, "run 5 (packages/a/src/in.txt changed) re-ran a#build: 1 miss") {
		t.Fatalf("after a build whose input moved while it ran: %q, want it run again", line)
	}
	if got := w.output(t); got != "v5\n" {
		t.Fatalf("after the build ran again: output %q, want v5", got)
	}
}
