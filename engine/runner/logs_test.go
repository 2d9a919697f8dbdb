package runner

import (
	"regexp"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/runout"
)

// Each --output-logs mode and --log-order shows the task output Turborepo's does; a hit's log
// comes after its hit line.
func TestLogOptions(t *testing.T) {
	f := newFixture(t)
	p := f.project("p")
	f.task(p, "ok", "echo ok-one; sleep 0.05; echo ok-two", func(t *graph.Task) { t.Inputs = []string{} })
	f.task(p, "bad", "echo bad-one; sleep 0.02; echo bad-two; exit 3", func(t *graph.Task) { t.Inputs = []string{} })
	ids := []string{"p#bad", "p#ok"}
	run := func(logs runout.LogOptions) string {
		_, out := f.run(ids, func(o *Options) { o.Logs = logs; o.Force = true })
		return out
	}
	has := func(mode, out string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in\n%s", mode, w, out)
			}
		}
	}
	hasNot := func(mode, out string, unwanted ...string) {
		t.Helper()
		for _, w := range unwanted {
			if strings.Contains(out, w) {
				t.Errorf("%s: %q in\n%s", mode, w, out)
			}
		}
	}
	out := run(runout.LogOptions{})
	has("full", out, "p#ok | ok-one\n", "p#bad | bad-two\n", "p#ok: forced", "p#bad: failed with exit code 3")
	out = run(runout.LogOptions{Show: runout.LogsErrorsOnly})
	has("errors-only", out, "p#bad | bad-one\np#bad | bad-two\np#bad: failed", "p#ok: forced")
	hasNot("errors-only", out, "ok-one")
	for _, mode := range []string{runout.LogsNone, runout.LogsHashOnly} {
		out = run(runout.LogOptions{Show: mode})
		has(mode, out, "p#ok: forced", "p#bad: failed")
		hasNot(mode, out, "ok-one", "bad-one")
		if mode == runout.LogsHashOnly && !regexp.MustCompile(`p#ok: forced \(\S+\) [0-9a-f]{64}\n`).MatchString(out) {
			t.Errorf("hash-only: no key on p#ok's line:\n%s", out)
		}
	}
	// Grouped: each task's lines together, before its status line, never interleaved.
	out = run(runout.LogOptions{Grouped: true})
	has("grouped", out, "p#ok | ok-one\np#ok | ok-two\np#ok: forced", "p#bad | bad-one\np#bad | bad-two\np#bad: failed")
	out = run(runout.LogOptions{Color: true})
	if !strings.Contains(out, "\x1b[31mfailed with exit code 3") || !strings.Contains(out, "\x1b[0m | ok-one") {
		t.Errorf("color: no red failure or coloured prefix in\n%q", out)
	}

	// A hit: its line first, then its log, unless only new output is asked for.
	f.run([]string{"p#ok"}, nil)
	_, out = f.run([]string{"p#ok"}, nil)
	if i, j := strings.Index(out, "p#ok: hit"), strings.Index(out, "p#ok | ok-one"); i < 0 || j < i {
		t.Errorf("a hit's log comes before its hit line:\n%s", out)
	}
	_, out = f.run([]string{"p#ok"}, func(o *Options) { o.Logs = runout.LogOptions{Show: runout.LogsNewOnly} })
	has("new-only", out, "p#ok: hit")
	hasNot("new-only", out, "ok-one")
}
