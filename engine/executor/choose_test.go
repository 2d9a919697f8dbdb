package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// fakeExecutor answers err (or a passing Result) and counts its runs.
type fakeExecutor struct {
	err  error
	runs []string
}

func (f *fakeExecutor) Run(_ context.Context, t Task) (Result, error) {
	f.runs = append(f.runs, t.ID)
	return Result{}, f.err
}

func TestChooserRunsEachTaskWhereItMay(t *testing.T) {
	local, remote := &fakeExecutor{}, &fakeExecutor{}
	c := &Chooser{Local: local, Remote: remote, UseRemote: func(t Task) bool { return t.ID != "app#dev" }}
	for _, id := range []string{"lib#build", "app#dev"} {
		res, err := c.Run(context.Background(), Task{ID: id})
		want := map[string]string{"lib#build": ExecutorRemote, "app#dev": ExecutorLocal}[id]
		if err != nil || res.Executor != want {
			t.Fatalf("%s: ran on %q (%v), want %s", id, res.Executor, err, want)
		}
	}
	if len(remote.runs) != 1 || len(local.runs) != 1 {
		t.Fatalf("remote ran %v, local %v", remote.runs, local.runs)
	}
}

// TestChooserFallsBackOnce: an engine that cannot run a task makes that task and every later one
// run locally, with one warning for the run; an error that is not the engine's stays the task's.
func TestChooserFallsBackOnce(t *testing.T) {
	for _, sentinel := range []error{ErrRemoteUnavailable, ErrRemoteLost} {
		local := &fakeExecutor{}
		remote := &fakeExecutor{err: fmt.Errorf("%w: Execute: FAILED_PRECONDITION no worker for platform", sentinel)}
		var warnings []string
		c := &Chooser{Local: local, Remote: remote, Warn: func(s string) { warnings = append(warnings, s) }}
		for _, id := range []string{"a#build", "b#build", "c#build"} {
			res, err := c.Run(context.Background(), Task{ID: id})
			if err != nil || res.Executor != ExecutorLocal {
				t.Fatalf("%s: ran on %q (%v), want local", id, res.Executor, err)
			}
		}
		if len(remote.runs) != 1 || len(local.runs) != 3 {
			t.Fatalf("remote ran %v, local %v; want one remote try", remote.runs, local.runs)
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], "no worker for platform") {
			t.Fatalf("warnings %q, want one naming the cause", warnings)
		}
	}
	other := errors.New("output not read")
	c := &Chooser{Local: &fakeExecutor{}, Remote: &fakeExecutor{err: other}}
	if res, err := c.Run(context.Background(), Task{ID: "a#build"}); !errors.Is(err, other) || res.Executor != ExecutorRemote {
		t.Fatalf("a remote task's own error: got %q %v", res.Executor, err)
	}
}
