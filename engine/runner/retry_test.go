package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/store"
)

// A task that fails once runs again as its exec.retries allows: the run passes, the task's row
// says it took two attempts and is flaky, its log holds both attempts, and history calls it flaky.
// One that fails every time fails after its last attempt; --retry 0 overrides exec.retries.
func TestRetriesPassAFlakyTask(t *testing.T) {
	f := newFixture(t)
	p := f.project("lib")
	f.task(p, "test", `if [ -f tried ]; then echo second passes; else touch tried; echo first fails; exit 3; fi`, func(t *graph.Task) {
		t.Retries = 2
		t.Inputs = []string{"src.txt"}
	})
	f.task(p, "lint", `echo always fails; exit 1`, func(t *graph.Task) { t.Retries = 1 })
	f.write("packages/lib/src.txt", "one")

	s, out := f.run([]string{"lib#test"}, nil)
	if !s.OK || s.Tasks[0].Status != store.StatusMiss || s.Tasks[0].Attempts != 2 || !s.Tasks[0].Flaky {
		t.Fatalf("retried run: %+v\n%s", s.Tasks[0], out)
	}
	if !strings.Contains(out, "lib#test | vx: lib#test failed with exit code 3 (attempt 1 of 3): running it again") {
		t.Errorf("no line says the task runs again:\n%s", out)
	}
	f.asLast(s)
	st, err := store.OpenReadOnly(context.Background(), f.ws.CacheDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log, err := history.Log(context.Background(), st, "lib#test", s.RunID, nil)
	if err != nil || !strings.Contains(log.Output, "first fails\nvx: lib#test failed with exit code 3 (attempt 1 of 3): running it again\nsecond passes\n") {
		t.Errorf("the log does not hold both attempts: %+v (%v)", log, err)
	}
	h, err := history.History(context.Background(), st, history.HistoryOptions{Limit: 10})
	if err != nil || len(h.Tasks) != 1 || h.Tasks[0].FailureMode == nil || *h.Tasks[0].FailureMode != history.FailureFlaky {
		t.Errorf("history's failure mode: %+v (%v)", h.Tasks, err)
	}

	s, out = f.run([]string{"lib#lint"}, nil)
	if s.OK || s.Tasks[0].Status != store.StatusFailed || s.Tasks[0].Attempts != 2 || s.Tasks[0].Flaky {
		t.Errorf("a task failing every attempt: %+v\n%s", s.Tasks[0], out)
	}
	zero := 0
	s, _ = f.run([]string{"lib#lint"}, func(o *Options) { o.Retry = &zero })
	if s.Tasks[0].Attempts != 0 {
		t.Errorf("--retry 0 ran it %d times", s.Tasks[0].Attempts)
	}
}

// A run's timeout cancels it as a signal does: the running task is stopped, the run is
// cancelled, and its summary says it timed out.
func TestRunTimeoutCancelsTheRun(t *testing.T) {
	f := newFixture(t)
	p := f.project("app")
	f.task(p, "serve", `echo started; sleep 60`, func(t *graph.Task) { t.Cache = false })
	s, out := f.run([]string{"app#serve"}, func(o *Options) { o.RunTimeout = 3 * time.Second; o.Grace = 100 * time.Millisecond })
	if s.OK || s.Status != store.RunCancelled || !s.TimedOut || s.Tasks[0].Status != store.StatusCancelled {
		t.Errorf("timed-out run: ok %v, status %s, timedOut %v, task %s\n%s", s.OK, s.Status, s.TimedOut, s.Tasks[0].Status, out)
	}
}
