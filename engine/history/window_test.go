package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
)

// randomHistory records runs of up to 40 tasks of 12 projects with every status, a few keys per
// task (so that some pass and fail with one key), sandbox violations now and then, runs that
// recorded nothing, and one status vx does not record.
func randomHistory(t *testing.T, runs int) (*store.Store, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 9))
	statuses := []store.Status{store.StatusHit, store.StatusHit, store.StatusHit, store.StatusMiss, store.StatusMiss, store.StatusFailed, store.StatusTimedOut,
		store.StatusBlocked, store.StatusSkipped, store.StatusCancelled, "someday"}
	base := time.Now().Add(-time.Hour)
	for i := range runs {
		started := base.Add(time.Duration(i) * time.Second)
		id := store.NewRunID(started)
		if err := st.BeginRun(ctx, store.Run{ID: id, Started: started, PID: os.Getpid(), Host: "test"}); err != nil {
			t.Fatal(err)
		}
		var b store.Batch
		for ord, k := range rng.Perm(36)[:rng.IntN(41)%37] {
			project, task := fmt.Sprintf("p%d", k/3), []string{"build", "test", "lint"}[k%3]
			status := statuses[rng.IntN(len(statuses))]
			d := time.Duration(rng.IntN(5000)) * time.Millisecond
			e := store.Execution{RunID: id, TaskID: project + "#" + task, Project: project, Task: task, Ord: ord,
				Status: status, Started: started, Duration: d, UserCPU: d / time.Duration(1+rng.IntN(3)), SysCPU: d / 7,
				PeakRSSBytes: int64(rng.IntN(1 << 30)), Hash: fmt.Sprintf("k%d", rng.IntN(3))}
			code := rng.IntN(3)
			switch status {
			case store.StatusBlocked:
				e.Hash, e.BlockedBy = "", "p0#build"
			case store.StatusSkipped:
				e.Hash, e.NotReady = "", []string{"p1#build"}
			case store.StatusTimedOut:
				e.TimedOut = true
			default:
				e.ExitCode = &code
			}
			if rng.IntN(15) == 0 {
				e.SandboxViolations = []string{"wrote /etc/x"}
			}
			b.Executions = append(b.Executions, e)
		}
		if err := st.Record(ctx, b); err != nil {
			t.Fatal(err)
		}
		final := []string{store.RunOK, store.RunFailed, store.RunCancelled}[rng.IntN(3)]
		if err := st.FinishRun(ctx, id, final, rng.IntN(2), started.Add(time.Duration(rng.IntN(9000))*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	return st, dir
}

// historyFromExecutions is History computed the plain way: every execution of the runs read
// whole, then counted, listed and ranked.
func historyFromExecutions(t *testing.T, st *store.Store, opts HistoryOptions) *RunHistory {
	t.Helper()
	ctx := context.Background()
	limit := ClampLimit(opts.Limit)
	runs, err := st.Runs(ctx, store.RunQuery{Limit: limit, Project: opts.Project, Task: opts.Task})
	if err != nil {
		t.Fatal(err)
	}
	out := &RunHistory{Limit: limit, Runs: []HistoryRun{}, Tasks: []TaskStats{}, Store: checkoutStore(st),
		Totals: HistoryTotals{Runs: len(runs), RunsByStatus: map[string]int{}, Failing: map[string]int{}}}
	for _, r := range runs {
		out.Totals.RunsByStatus[r.Status]++
		all, err := st.Executions(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		s := summary.Summarize(r, all)
		hr := HistoryRun{RunID: r.ID, Status: r.Status, OK: s.OK, ExitCode: s.ExitCode, StartedAt: s.StartedAt,
			WallMs: s.Totals.WallMs, Counts: map[store.Status]int{}, Tasks: []HistoryTask{}}
		var inScope []store.Execution
		for _, e := range all {
			if (opts.Project == "" || e.Project == opts.Project) && (opts.Task == "" || e.Task == opts.Task) {
				inScope = append(inScope, e)
				hr.Counts[e.Status]++
			}
		}
		for _, e := range inScope {
			passed := (e.Status == store.StatusHit || e.Status == store.StatusMiss) && len(e.SandboxViolations) == 0
			if len(inScope) <= RunTasksListed || !passed && len(hr.Tasks) < FooterTasksListed {
				hr.Tasks = append(hr.Tasks, historyTask(store.Listed{TaskID: e.TaskID, Status: e.Status, ExitCode: e.ExitCode,
					Duration: e.Duration, Hash: e.Hash, BlockedBy: e.BlockedBy, TimedOut: e.TimedOut,
					SandboxViolations: e.SandboxViolations, NotReady: e.NotReady}))
			}
		}
		hr.OmittedTasks = len(inScope) - len(hr.Tasks)
		out.Runs = append(out.Runs, hr)
	}
	// The statistics count every execution recorded of the scope's tasks, the most recently run
	// task first; the executions' rows are the most recent limit of them.
	every, err := st.TaskExecutions(ctx, store.ExecQuery{Project: opts.Project, Task: opts.Task})
	if err != nil {
		t.Fatal(err)
	}
	out.Executions = []ExecutionRow{}
	for i, e := range every {
		if i < limit {
			out.Executions = append(out.Executions, ExecutionRow{RunID: e.RunID, TaskID: e.TaskID, Project: e.Project, Task: e.Task,
				Status: e.Status, ExitCode: e.ExitCode, CacheHit: e.Status == store.StatusHit, DurationMs: e.Duration.Milliseconds(),
				StartedAt: e.Started.UnixMilli(), EndedAt: e.Started.Add(e.Duration).UnixMilli()})
		}
	}
	perTask, order := map[string][]store.Execution{}, []string{}
	for _, e := range every {
		if len(runs) == 0 {
			break
		}
		if _, seen := perTask[e.TaskID]; !seen {
			order = append(order, e.TaskID)
		}
		perTask[e.TaskID] = append(perTask[e.TaskID], e)
	}
	for _, id := range order {
		out.Tasks = append(out.Tasks, Stats(id, perTask[id]))
	}
	out.Totals.Tasks = len(out.Tasks)
	for _, s := range out.Tasks {
		if s.FailureMode != nil {
			out.Totals.Failing[*s.FailureMode]++
		}
	}
	if len(out.Tasks) > TaskStatsListed {
		out.OmittedTasks = len(out.Tasks) - TaskStatsListed
		out.Tasks = out.Tasks[:TaskStatsListed]
	}
	return out
}

// History and List read counts and a few columns through the readers' indexes; they answer what
// reading every execution whole answers, and the same again on an index without those indexes.
func TestHistoryMatchesExecutions(t *testing.T) {
	ctx := context.Background()
	st, dir := randomHistory(t, 60)
	queries := []HistoryOptions{{}, {Limit: 1}, {Limit: 7}, {Limit: 500}, {Project: "p3"}, {Project: "p3", Limit: 500},
		{Task: "test"}, {Task: "lint", Limit: 3}, {Project: "p5", Task: "build", Limit: 9}, {Project: "nope"}, {Task: "nope"}}
	check := func(st *store.Store, what string) {
		t.Helper()
		for _, q := range queries {
			got, err := History(ctx, st, q)
			if err != nil {
				t.Fatal(err)
			}
			gotJSON, _ := json.Marshal(got)
			wantJSON, _ := json.Marshal(historyFromExecutions(t, st, q))
			if string(gotJSON) != string(wantJSON) {
				t.Errorf("%s: History(%+v) =\n%.1500s\nfrom the executions:\n%.1500s", what, q, gotJSON, wantJSON)
			}
		}
		list, err := List(ctx, st, 500)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list {
			run, _, _ := st.RunByID(ctx, r.RunID)
			execs, _ := st.Executions(ctx, r.RunID)
			if want := invocationOf(run, summary.Summarize(run, execs)); !reflect.DeepEqual(r, want) {
				t.Errorf("%s: run %s invocation %+v, from the executions %+v", what, r.RunID, r, want)
			}
		}
	}
	check(st, "with the readers' indexes")
	full, err := History(ctx, st, HistoryOptions{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	flaky, listedAll, listedPart := false, false, false
	for _, s := range full.Tasks {
		flaky = flaky || s.FailureMode != nil && *s.FailureMode == FailureFlaky
	}
	for _, r := range full.Runs {
		n := 0
		for _, c := range r.Counts {
			n += c
		}
		listedAll = listedAll || n > 0 && n <= RunTasksListed
		listedPart = listedPart || n > RunTasksListed
	}
	if !flaky || !listedAll || !listedPart {
		t.Fatalf("the random history misses a case: flaky %v, small runs %v, large runs %v", flaky, listedAll, listedPart)
	}
	st.Close()

	// An index recorded before the readers' indexes existed.
	db, err := sql.Open("sqlite", store.IndexPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, ix := range []string{"executions_by_run", "executions_by_status"} {
		if _, err := db.Exec(`DROP INDEX ` + ix); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	ro, err := store.OpenReadOnly(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	check(ro, "without them")
}
