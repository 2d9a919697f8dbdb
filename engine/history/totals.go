package history

import "github.com/vzn/vx/engine/store"

// HistoryTotals count the window of a RunHistory, whatever its lists hold: the runs by status and
// the tasks with statistics, those that failed by failure mode. A summary begins with them.
type HistoryTotals struct {
	Runs int `json:"runs"`
	// RunsByStatus counts the runs by status: ok, failed, cancelled, running, interrupted.
	RunsByStatus map[string]int `json:"runsByStatus"`
	// Tasks counts the tasks with statistics, listed or omitted.
	Tasks int `json:"tasks"`
	// Failing counts the tasks that failed in the window by failure mode (flaky, timeout,
	// deterministic): the tasks listed first.
	Failing map[string]int `json:"failing"`
}

// totalsOf counts the runs and the statistics (all of them, before any cut).
func totalsOf(runs []HistoryRun, stats []TaskStats) HistoryTotals {
	t := HistoryTotals{Runs: len(runs), RunsByStatus: map[string]int{}, Tasks: len(stats), Failing: map[string]int{}}
	for _, r := range runs {
		t.RunsByStatus[r.Status]++
	}
	for _, s := range stats {
		if s.FailureMode != nil {
			t.Failing[*s.FailureMode]++
		}
	}
	return t
}

// Brief shortens each run's task rows to at most n of those that did not pass (failed, timed out,
// blocked, skipped, cancelled, or with sandbox violations: a run's footer), counting the rest in
// the run's OmittedTasks, so that a summary can list many runs; the run's own summary (Last)
// answers its every task.
func (h *RunHistory) Brief(n int) {
	for i := range h.Runs {
		r := &h.Runs[i]
		kept := make([]HistoryTask, 0, min(n, len(r.Tasks)))
		for _, t := range r.Tasks {
			if len(kept) < n && !passedClean(t) {
				kept = append(kept, t)
			}
		}
		r.OmittedTasks += len(r.Tasks) - len(kept)
		r.Tasks = kept
	}
}

// passedClean reports whether a run's task passed (a hit or a miss) with nothing outside its
// sandbox.
func passedClean(t HistoryTask) bool {
	return (t.Status == store.StatusHit || t.Status == store.StatusMiss) && len(t.SandboxViolations) == 0
}
