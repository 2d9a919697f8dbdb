package tools

import (
	"encoding/json"
	"slices"

	"github.com/vzn/vx/actor/tool/window"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/runner"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
)

// needsAttention reports whether a run's task is one a summary lists: it did not pass, it did
// something outside its sandbox, or it passed and was not cached.
func needsAttention(t summary.TaskResult) bool {
	switch t.Status {
	case store.StatusFailed, store.StatusTimedOut, store.StatusBlocked, store.StatusCancelled, store.StatusSkipped:
		return true
	}
	return len(t.SandboxViolations) > 0 || t.NotCachedReason != ""
}

// runLists orders a run summary's tasks as a summary reads them (those that need attention first,
// then the others, each in the run's order) and answers its lists: past RunTasksListed tasks a
// first page lists only those that need attention and counts the rest, which the cursor reaches.
// runTasks and getRunHistory { runId } answer the same lists, so a cursor of one continues in the
// other.
func runLists(s *summary.Summary) []window.List {
	slices.SortStableFunc(s.Tasks, func(a, b summary.TaskResult) int {
		return rank(needsAttention(a)) - rank(needsAttention(b))
	})
	tasks := window.Of("tasks", &s.Tasks)
	requested := window.Of("requested", &s.Requested)
	if len(s.Tasks) > history.RunTasksListed {
		n := 0
		for _, t := range s.Tasks {
			if needsAttention(t) {
				n++
			}
		}
		tasks = tasks.Head(n)
	}
	if len(s.Requested) > history.RunTasksListed {
		requested = requested.Head(0)
	}
	return []window.List{tasks, requested}
}

// planLists orders a plan's tasks as a summary reads them (the predicted misses, which would run,
// first) and answers its lists, the critical path and the tasks: past RunTasksListed tasks a
// first page lists only the misses.
func planLists(p *runner.Plan) []window.List {
	slices.SortStableFunc(p.Tasks, func(a, b runner.PlanTask) int {
		return rank(a.Cache != store.StatusHit) - rank(b.Cache != store.StatusHit)
	})
	tasks := window.Of("tasks", &p.Tasks)
	if len(p.Tasks) > history.RunTasksListed {
		n := 0
		for _, t := range p.Tasks {
			if t.Cache != store.StatusHit {
				n++
			}
		}
		tasks = tasks.Head(n)
	}
	// The critical path comes first: a summary shows it whole unless it alone fills a page.
	return []window.List{window.Of("criticalPath", &p.CriticalPath), tasks}
}

// rank sorts true before false.
func rank(first bool) int {
	if first {
		return 0
	}
	return 1
}

// planCounts counts a plan's tasks by predicted cache status.
func planCounts(p *runner.Plan) map[store.Status]int {
	counts := map[store.Status]int{}
	for _, t := range p.Tasks {
		counts[t.Cache]++
	}
	return counts
}

// runIDArgs are getRunHistory's arguments that answer the run id's tasks.
func runIDArgs(runID string) json.RawMessage {
	js, _ := json.Marshal(map[string]string{"runId": runID})
	return js
}
