package history

import (
	"context"
	"errors"
	"fmt"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/logtext"
	"github.com/vzn/vx/engine/mask"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
	"github.com/vzn/vx/engine/vxerr"
)

// ResolveRun answers the whole id of the run named by id or a unique prefix of it. An ambiguous
// prefix is refused listing its candidates; an empty id or one naming no run is a usage error.
func ResolveRun(ctx context.Context, st *store.Store, id string) (string, error) {
	if id == "" {
		return "", vxerr.Usagef("run id: empty")
	}
	full, err := st.ResolveRun(ctx, id)
	var amb *store.AmbiguousRunError
	var unk *store.UnknownRunError
	switch {
	case errors.As(err, &amb), errors.As(err, &unk):
		return "", &vxerr.UsageError{Msg: err.Error()}
	case err != nil:
		return "", err
	}
	return full, nil
}

// Last answers the summary of a run: runID (whole or a unique prefix), or the latest run when "".
// With no run recorded it is a usage error saying so.
func Last(ctx context.Context, st *store.Store, runID string) (*summary.Summary, error) {
	run, execs, err := lastRun(ctx, st, runID)
	if err != nil {
		return nil, err
	}
	return summary.Summarize(run, execs), nil
}

// lastRun answers the run Last and LastRun answer, and its executions.
func lastRun(ctx context.Context, st *store.Store, runID string) (store.Run, []store.Execution, error) {
	var run store.Run
	if runID == "" {
		runs, err := st.Runs(ctx, store.RunQuery{Limit: 1})
		if err != nil {
			return store.Run{}, nil, err
		}
		if len(runs) == 0 {
			return store.Run{}, nil, vxerr.Usagef("no run recorded yet in %s", st.Dir())
		}
		run = runs[0]
	} else {
		id, err := ResolveRun(ctx, st, runID)
		if err != nil {
			return store.Run{}, nil, err
		}
		r, _, err := st.RunByID(ctx, id)
		if err != nil {
			return store.Run{}, nil, err
		}
		run = r
	}
	execs, err := st.Executions(ctx, run.ID)
	if err != nil {
		return store.Run{}, nil, err
	}
	return run, execs, nil
}

// DefaultLimit is the number of runs answered when no limit is given; MaxLimit the most ever.
const (
	DefaultLimit = 20
	MaxLimit     = 500
	// HistoryLimit is getRunHistory's default, the original's: the runs and executions answered.
	HistoryLimit = 50
)

// ClampLimit brings a limit into 1..MaxLimit, 0 meaning DefaultLimit.
func ClampLimit(limit int) int {
	switch {
	case limit == 0:
		return DefaultLimit
	case limit < 1:
		return 1
	case limit > MaxLimit:
		return MaxLimit
	}
	return limit
}

// List answers recent runs as the original's invocations, newest first (limit clamped by
// ClampLimit): `vx last --list --format json`. Each run's totals are counted in the index, in one
// snapshot, rather than summed from its executions.
func List(ctx context.Context, st *store.Store, limit int) ([]Invocation, error) {
	limit = ClampLimit(limit)
	out := []Invocation{}
	err := st.Snapshot(ctx, func(sn *store.Snapshot) error {
		runs, err := sn.Runs(ctx, store.RunQuery{Limit: limit})
		if err != nil || len(runs) == 0 {
			return err
		}
		w := store.Window{Oldest: runs[len(runs)-1].ID, Newest: runs[0].ID}
		counts, err := sn.StatusCounts(ctx, w)
		if err != nil {
			return err
		}
		saved, err := sn.SavedByRun(ctx, w)
		if err != nil {
			return err
		}
		remote, err := sn.RemoteHitsByRun(ctx, w)
		if err != nil {
			return err
		}
		for _, r := range runs {
			s := summary.Summarize(r, nil)
			for status, n := range counts[r.ID] {
				s.Totals.Count(status, n)
			}
			s.Totals.SavedMs, s.Totals.RemoteHits = saved[r.ID], remote[r.ID]
			out = append(out, invocationOf(r, s))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Log sources.
const (
	LogFromFailure = "failure"
	LogFromCache   = "cache"
	// LogFromUncached is the log of a run that passed and stored no cache entry (its reason is
	// the log's last line and the execution's notCachedReason).
	LogFromUncached = "uncached"
)

// TaskLog is `vx last --log TASKID --format json` and getTaskLog's answer: what a task printed in
// a run, as plain text, cut in the middle when long.
type TaskLog struct {
	RunID  string       `json:"runId"`
	TaskID string       `json:"taskId"`
	Status store.Status `json:"status"`
	// Source is "failure" (the log of a failed run), "cache" (the cache entry's log, as a hit
	// replays it), "uncached" (the log of a pass whose outputs were not cached, ending with the
	// reason), or null when vx kept none (a pass of a task with cache: false, a skip, a pruned
	// entry).
	Source *string `json:"source"`
	// NoLog says, when Source is null, why there is no log; "" when there is one.
	NoLog string `json:"noLog,omitempty"`
	// Text is the output (empty when there is no log), how long the whole is and how much was cut.
	logtext.Text
	// whole is the output uncut, for a person who asks for all of it (`vx last --log --full`).
	whole string
	// Store names the folder the answer was read from: this checkout's history.
	Store Store `json:"store"`
}

// Whole is the task's whole output, plain text and masked, never cut.
func (l *TaskLog) Whole() string { return l.whole }

// Log answers a task's log in a run (runID whole or a prefix; "" for the latest run that recorded
// the task): plain text (logtext.Plain), masked with m as well (it was masked when stored, and again
// once escapes are gone, should a secret have been split by one), cut by logtext.Cut.
func logOf(ctx context.Context, st *store.Store, taskID, runID string, m *mask.Masker) (*TaskLog, error) {
	e, err := logExecution(ctx, st, taskID, runID)
	if err != nil {
		return nil, err
	}
	return readLog(st, e, m)
}

// logExecution is the execution whose log Log answers: taskID's in runID, or in the latest run
// that recorded it.
func logExecution(ctx context.Context, st *store.Store, taskID, runID string) (store.Execution, error) {
	if _, _, ok := graph.SplitTaskID(taskID); !ok {
		return store.Execution{}, vxerr.Usagef("task id %q: want project#task", taskID)
	}
	if runID == "" {
		execs, err := st.TaskExecutions(ctx, store.ExecQuery{TaskID: taskID, Limit: 1})
		if err != nil {
			return store.Execution{}, err
		}
		if len(execs) == 0 {
			return store.Execution{}, vxerr.Usagef("no recorded run has %s", taskID)
		}
		return execs[0], nil
	}
	id, err := ResolveRun(ctx, st, runID)
	if err != nil {
		return store.Execution{}, err
	}
	e, ok, err := st.Execution(ctx, id, taskID)
	if err != nil {
		return store.Execution{}, err
	}
	if !ok {
		return store.Execution{}, vxerr.Usagef("run %s did not record %s", id, taskID)
	}
	return e, nil
}

// readLog reads e's stored log whole, as Log answers it.
func readLog(st *store.Store, e store.Execution, m *mask.Masker) (*TaskLog, error) {
	out := &TaskLog{RunID: e.RunID, TaskID: e.TaskID, Status: e.Reported()}
	if e.LogBlob == "" || e.LogSource == "" {
		out.NoLog = noLogReason(e)
		return out, nil
	}
	data, err := st.CAS().Get(e.LogBlob)
	if errors.Is(err, store.ErrMissing) {
		out.NoLog = prunedNoLog
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("log of %s: %w", e.TaskID, err)
	}
	src := e.LogSource
	out.Source = &src
	out.whole = plainMasked(string(data), m)
	out.Text = logtext.Cut(out.whole)
	return out, nil
}

// prunedNoLog is the reason a log the index names has no blob.
const prunedNoLog = "its log is no longer in the cache: vx cache prune removed it"

// noLogReason says why the execution e recorded no log.
func noLogReason(e store.Execution) string {
	switch e.Status {
	case store.StatusMiss:
		return "it passed and no cache entry was stored for it: vx keeps a task's log with its cache entry, or when it fails"
	case store.StatusHit:
		return "the cache entry it was restored from holds no log"
	case store.StatusBlocked:
		if e.BlockedBy != "" {
			return "it did not run: " + e.BlockedBy + ", which it depends on, failed"
		}
		return "it did not run: a task it depends on failed"
	case store.StatusSkipped:
		return "it did not run: the run stopped before it started (--bail, or the run was cancelled)"
	}
	return "the run recorded no log of it"
}

// UncachedNoLog is the reason a passing task that is not cached (cache: false) has no log.
const UncachedNoLog = "the task is not cached (cache: false), and vx keeps a task's log only with its cache entry, or when it fails"

// Uncached gives the reason of a task that is not cached (cache: false) to a log that is absent
// because the task passed, where ws (the workspace as loaded now; nil when its config does not
// load) says so of the task: the history alone cannot. vx last --log and getTaskLog both ask it.
func (l *TaskLog) Uncached(ws *graph.Workspace) {
	if ws == nil || l.Source != nil || l.Status != store.StatusMiss {
		return
	}
	if t, ok := ws.Task(l.TaskID); ok && !t.Cache {
		l.NoLog = UncachedNoLog
	}
}

// plainMasked is what a task printed as plain text, masked before and after the escapes go.
func plainMasked(log string, m *mask.Masker) string {
	return m.String(logtext.Plain(m.String(log)))
}

// Failure is one failed task of a run, with its output as plain text, cut when long.
type Failure struct {
	TaskID string `json:"taskId"`
	// Status is failed or timedOut.
	Status   store.Status `json:"status"`
	ExitCode *int         `json:"exitCode"`
	TimedOut bool         `json:"timedOut"`
	logtext.Text
	// Plain is the whole output as plain text, masked, for a caller that scans it (getFailures
	// finds the file locations it names); it is not part of the answer.
	Plain string `json:"-"`
}

// Failures is a run's failed tasks.
type Failures struct {
	RunID    string    `json:"runId"`
	Failures []Failure `json:"failures"`
	// Store names the folder the answer was read from: this checkout's history.
	Store Store `json:"store"`
}

// FailedTasks answers the failed tasks of a run (whole id or prefix; "" for the latest run that
// did not end ok), each with its output as Log answers one.
func failedTasksOf(ctx context.Context, st *store.Store, runID string, m *mask.Masker) (*Failures, error) {
	if runID == "" {
		runs, err := st.Runs(ctx, store.RunQuery{Failed: true, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(runs) == 0 {
			return &Failures{Failures: []Failure{}}, nil
		}
		runID = runs[0].ID
	} else {
		id, err := ResolveRun(ctx, st, runID)
		if err != nil {
			return nil, err
		}
		runID = id
	}
	execs, err := st.FailedExecutions(ctx, runID)
	if err != nil {
		return nil, err
	}
	out := &Failures{RunID: runID, Failures: []Failure{}}
	for _, e := range execs {
		f := Failure{TaskID: e.TaskID, Status: e.Status, ExitCode: e.ExitCode, TimedOut: e.TimedOut}
		if data, err := st.CAS().Get(e.LogBlob); err == nil {
			f.Plain = plainMasked(string(data), m)
		}
		f.Text = logtext.Cut(f.Plain)
		out.Failures = append(out.Failures, f)
	}
	return out, nil
}

// Log is logOf with the answer's store named (checkout).
func Log(ctx context.Context, st *store.Store, taskID, runID string, m *mask.Masker) (*TaskLog, error) {
	out, err := logOf(ctx, st, taskID, runID, m)
	if out != nil {
		out.Store = checkoutStore(st)
	}
	return out, err
}

// FailedTasks is failedTasksOf with the answer's store named (checkout).
func FailedTasks(ctx context.Context, st *store.Store, runID string, m *mask.Masker) (*Failures, error) {
	out, err := failedTasksOf(ctx, st, runID, m)
	if out != nil {
		out.Store = checkoutStore(st)
	}
	return out, err
}
