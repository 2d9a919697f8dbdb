// Package summary holds the words a run is made of, where runs are made: the run summary (`vx run
// --format json`, --summarize, the last run of `vx last`), each task's row and the totals, the
// remote cache's and the memory budget's sections. The runner writes it; history reads runs back
// into it; the statuses themselves are store.Status, the index's words.
package summary

import (
	"encoding/json"
	"math"
	"strings"
	"time"

	"github.com/vzn/vx/engine/store"
)

// A task's status in a run summary is a store.Status (hit, miss, forced, failed, blocked,
// skipped, timedOut, cancelled): the words the index keeps, and forced for a miss that ran
// because the run ignored the cache (store.Execution.Reported).

// CacheSourceLocal is the cacheSource of a hit from the local cache.
const CacheSourceLocal = "local"

// CacheSourceSharedPrefix starts the cacheSource of a hit on an entry another checkout sharing the
// store wrote: "shared:" and that checkout's root.
const CacheSourceSharedPrefix = "shared:"

// SharedSource is the cacheSource of a hit on an entry the checkout at root wrote.
func SharedSource(root string) string { return CacheSourceSharedPrefix + root }

// Summary is the run summary: `vx run --format json`, `vx run --summarize`, `vx last --format json`.
type Summary struct {
	RunID string `json:"runId"`
	OK    bool   `json:"ok"`
	// ExitCode is the exit status of vx run: 0 when ok, else 1.
	ExitCode int `json:"exitCode"`
	// Status is ok, failed, cancelled, running or interrupted (the process died mid-run).
	Status    string       `json:"status"`
	StartedAt time.Time    `json:"startedAt"`
	Requested []string     `json:"requested"`
	Tasks     []TaskResult `json:"tasks"`
	Totals    Totals       `json:"totals"`
	// RemoteCache is what the shared remote cache did in this run (vx run only; absent without one).
	RemoteCache *RemoteCacheRun `json:"remoteCache,omitempty"`
	// Memory is the memory budget the run's tasks reserved from.
	Memory Memory `json:"memory"`
	// NoTasks says why a run ran no task ("nothing affected since main": --affected or a [REF]
	// filter selected none); such a run has no id and no history. Absent otherwise.
	NoTasks string `json:"noTasks,omitempty"`
	// Tags are the run's key=value labels (vx run --tag); absent for none.
	Tags map[string]string `json:"tags,omitempty"`
	// TimedOut says the run was cancelled because its own timeout ran out (vx run --timeout,
	// runTimeout); only the run that saw it says so.
	TimedOut bool `json:"timedOut,omitempty"`
	// The original's fields, written after vx's (MarshalJSON) and read back (UnmarshalJSON), and
	// left out of the types a tool's output schema is made from: EndedAt is when the run finished
	// (nil while it runs) and TotalMs its wall time; Aborted are the tasks a cancellation stopped
	// (status cancelled), which Tasks holds too; Counts are the run's tasks in the original's
	// buckets.
	EndedAt *time.Time   `json:"-"`
	TotalMs int64        `json:"-"`
	Aborted []TaskResult `json:"-"`
	Counts  Counts       `json:"-"`
}

// originalRun is the original's fields of a summary as JSON writes them.
type originalRun struct {
	EndedAt *time.Time   `json:"endedAt,omitempty"`
	TotalMs int64        `json:"totalMs"`
	Aborted []TaskResult `json:"aborted"`
	Counts  Counts       `json:"summary"`
}

// Counts count a run's tasks in the original's buckets: Successful ran and passed, Skipped were
// blocked or skipped, the hits split by where they came from (CachedLocal, CachedRemote) and by
// what they did (UpToDate found their outputs in place; RestoredLocal and RestoredRemote restored
// them), Aborted were cancelled; Total counts every task but the aborted.
type Counts struct {
	Successful     int `json:"successful"`
	Failed         int `json:"failed"`
	Skipped        int `json:"skipped"`
	CachedLocal    int `json:"cachedLocal"`
	RestoredLocal  int `json:"restoredLocal"`
	RestoredRemote int `json:"restoredRemote"`
	UpToDate       int `json:"upToDate"`
	CachedRemote   int `json:"cachedRemote"`
	Aborted        int `json:"aborted"`
	Total          int `json:"total"`
}

// count adds a task of the run, reported as status, to the counts.
func (c *Counts) count(t TaskResult, status store.Status) {
	c.Total++
	switch status {
	case store.StatusMiss, store.StatusForced:
		c.Successful++
	case store.StatusFailed, store.StatusTimedOut:
		c.Failed++
	case store.StatusBlocked, store.StatusSkipped:
		c.Skipped++
	case store.StatusCancelled:
		c.Aborted++
		c.Total--
	case store.StatusHit:
		remote := t.CacheSource != nil && FromRemote(*t.CacheSource)
		restored := t.RestoredFiles == nil || *t.RestoredFiles > 0
		switch {
		case !restored:
			c.UpToDate++
		case remote:
			c.RestoredRemote++
		default:
			c.RestoredLocal++
		}
		if remote {
			c.CachedRemote++
		} else {
			c.CachedLocal++
		}
	}
}

// MarshalJSON writes the summary, the original's fields after vx's, its aborted tasks a list
// (never null).
func (s Summary) MarshalJSON() ([]byte, error) {
	type plain Summary
	aborted := s.Aborted
	if aborted == nil {
		aborted = []TaskResult{}
	}
	return json.Marshal(struct {
		plain
		originalRun
	}{plain(s), originalRun{EndedAt: s.EndedAt, TotalMs: s.TotalMs, Aborted: aborted, Counts: s.Counts}})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Summary) UnmarshalJSON(b []byte) error {
	type plain Summary
	v := struct {
		*plain
		originalRun
	}{plain: (*plain)(s)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	o := v.originalRun
	s.EndedAt, s.TotalMs, s.Aborted, s.Counts = o.EndedAt, o.TotalMs, o.Aborted, o.Counts
	return nil
}

// TaskResult is one task of a run summary.
type TaskResult struct {
	TaskID string       `json:"taskId"`
	Status store.Status `json:"status"`
	// Hash is the task's cache key ("" when it was never computed: blocked, skipped).
	Hash       string `json:"hash"`
	DurationMs int64  `json:"durationMs"`
	// CacheSource is "local", "shared:<checkout root>" (an entry another worktree or checkout
	// sharing the store wrote) or "remote" for a hit, null otherwise; "remote-action" for an
	// early-cutoff hit found by the Action digest in the engine's Action Cache.
	CacheSource *string `json:"cacheSource"`
	// ExitCode is the command's exit status; null when it did not run or was killed by a signal.
	ExitCode *int `json:"exitCode"`
	// BlockedBy names the failed task that kept this one from running.
	BlockedBy *string `json:"blockedBy"`
	TimedOut  bool    `json:"timedOut"`
	// SandboxViolations lists what the task did outside its declared sandbox.
	SandboxViolations []string `json:"sandboxViolations"`
	// InputsChangedDuringRun lists the input files (as its inputs name them) that changed while
	// the task's command ran, whose outputs were then not cached; absent for every other task.
	// Only the run that saw it says so: the index does not keep it.
	InputsChangedDuringRun []string `json:"inputsChangedDuringRun,omitempty"`
	// NotReady lists, for a skipped task, the tasks it still waited for when the run stopped; for
	// a persistent task that never became ready (readyWhen), itself, and for a task it blocked, it.
	NotReady     []string `json:"notReady"`
	PeakRssBytes int64    `json:"peakRssBytes"`
	// ReservedBytes is the memory the scheduler reserved for the task from the run's budget: the
	// largest peak RSS of its recent executions, or a default for a task with none.
	ReservedBytes int64 `json:"reservedBytes"`
	// CPUParallelism is CPU time over wall time.
	CPUParallelism float64 `json:"cpuParallelism"`
	// SavedMs is, for a hit, how long the cached execution took.
	SavedMs int64 `json:"savedMs"`
	// WaitedMs is how long the task waited for another vx process that was running it (the
	// task lock).
	WaitedMs int64 `json:"waitedMs"`
	// RestoredFiles is, for a hit, how many output files it restored (0 for a task whose outputs
	// hold nothing); absent otherwise.
	RestoredFiles *int `json:"restoredFiles,omitempty"`
	// Attempts is how many times the task ran in the run, when more than once (vx run --retry,
	// exec.retries); absent otherwise. Flaky says it passed after a failed attempt.
	Attempts int  `json:"attempts,omitempty"`
	Flaky    bool `json:"flaky,omitempty"`
	// NotCachedReason says why a task that ran and passed stored no cache entry (a link its
	// outputs may not hold, inputs that changed while it ran); absent for every other task.
	NotCachedReason string `json:"notCachedReason,omitempty"`
	// ID is TaskID under the original's name.
	ID string `json:"id"`
	// Project and Task are the halves of TaskID, the original's fields.
	Project string `json:"project"`
	Task    string `json:"task"`
	// WaitedFor names what the task waited for: another process that was executing its cache key
	// (in this checkout or another sharing the cache store). Absent when it waited for none. Only
	// the run that waited says so: the index does not keep it.
	WaitedFor *WaitedFor `json:"waitedFor,omitempty"`
	// Executor names where the task's command ran, local or remote, in a run that executes
	// remotely; absent otherwise.
	Executor string `json:"executor,omitempty"`
	// OutputsRemote says that the task's outputs stayed remote (vx run --download): its cache
	// entry lists them and a later local task or run fetches them; absent otherwise.
	OutputsRemote bool `json:"outputsRemote,omitempty"`
}

// WaitedFor is the cache key a task waited for and the process that was executing it.
type WaitedFor struct {
	// Key is the cache key.
	Key string `json:"key"`
	// PID is the process executing it; 0 when not known.
	PID int `json:"pid"`
	// Checkout is the workspace root of that process's run; "" when not known.
	Checkout string `json:"checkout,omitempty"`
	// TaskID is the task it ran under the key.
	TaskID string `json:"taskId,omitempty"`
}

// Totals count a run's tasks by outcome.
type Totals struct {
	Tasks     int   `json:"tasks"`
	Hits      int   `json:"hits"`
	Misses    int   `json:"misses"`
	Failed    int   `json:"failed"`
	Blocked   int   `json:"blocked"`
	Skipped   int   `json:"skipped"`
	Cancelled int   `json:"cancelled"`
	WallMs    int64 `json:"wallMs"`
	SavedMs   int64 `json:"savedMs"`
	// RemoteHits counts the hits restored from the shared remote cache.
	RemoteHits int `json:"remoteHits,omitempty"`
	// Forced counts the misses that ran because the run ignored the cache (--force); Misses
	// counts them too.
	Forced int `json:"forced,omitempty"`
}

// Summarize builds the summary of a run from its index rows. vx run builds its answer with it from
// the rows it records, so that vx last answers the same document later.
func Summarize(run store.Run, execs []store.Execution) *Summary {
	s := &Summary{RunID: run.ID, Status: run.Status, StartedAt: run.Started.UTC(), Requested: nonNil(run.Requested),
		Tasks: make([]TaskResult, 0, len(execs)), Memory: Memory{BudgetBytes: run.MemoryBudget, Source: run.MemorySource}}
	for _, e := range execs {
		t := taskResult(e)
		s.Tasks = append(s.Tasks, t)
		s.Totals.Count(e.Reported(), 1)
		s.Counts.count(t, e.Reported())
		if e.Reported() == store.StatusCancelled {
			s.Aborted = append(s.Aborted, t)
		}
		if e.Status == store.StatusHit {
			s.Totals.SavedMs += t.SavedMs
			if FromRemote(e.CacheSource) {
				s.Totals.RemoteHits++
			}
		}
	}
	s.OK, s.ExitCode, s.Totals.WallMs = Outcome(run)
	s.TotalMs = s.Totals.WallMs
	if !run.Finished.IsZero() {
		ended := run.Finished.UTC()
		s.EndedAt = &ended
	}
	s.Tags = run.Tags
	return s
}

// Outcome answers what a run's row says of it: whether it succeeded, vx run's exit status (1 for a
// run that ended otherwise without one), and its wall time (0 while it runs).
func Outcome(run store.Run) (ok bool, exitCode int, wallMs int64) {
	ok, exitCode = run.Status == store.RunOK, run.ExitCode
	if !ok && exitCode == 0 && run.Status != store.RunRunning {
		exitCode = 1
	}
	if !run.Finished.IsZero() {
		wallMs = run.Finished.Sub(run.Started).Milliseconds()
	}
	return ok, exitCode, wallMs
}

// Count adds n tasks of a status.
func (t *Totals) Count(status store.Status, n int) {
	t.Tasks += n
	switch status {
	case store.StatusHit:
		t.Hits += n
	case store.StatusMiss:
		t.Misses += n
	case store.StatusForced:
		t.Misses += n
		t.Forced += n
	case store.StatusFailed, store.StatusTimedOut:
		t.Failed += n
	case store.StatusBlocked:
		t.Blocked += n
	case store.StatusSkipped:
		t.Skipped += n
	case store.StatusCancelled:
		t.Cancelled += n
	}
}

func taskResult(e store.Execution) TaskResult {
	t := TaskResult{
		TaskID: e.TaskID, Status: e.Reported(), Hash: e.Hash, DurationMs: e.Duration.Milliseconds(),
		ExitCode: e.ExitCode, TimedOut: e.TimedOut, SandboxViolations: nonNil(e.SandboxViolations),
		NotReady: nonNil(e.NotReady), PeakRssBytes: e.PeakRSSBytes, ReservedBytes: e.ReservedBytes, SavedMs: e.Saved.Milliseconds(),
		WaitedMs:      e.Waited.Milliseconds(),
		RestoredFiles: e.RestoredFiles, NotCachedReason: e.NotCached, ID: e.TaskID, Project: e.Project, Task: e.Task,
		Executor: e.Executor, OutputsRemote: e.OutputsRemote,
	}
	if t.Project == "" {
		t.Project, t.Task, _ = strings.Cut(e.TaskID, "#")
	}
	if e.CacheSource != "" {
		src := e.CacheSource
		t.CacheSource = &src
	}
	if e.BlockedBy != "" {
		b := e.BlockedBy
		t.BlockedBy = &b
	}
	t.CPUParallelism = cpuParallelism(e)
	if e.FailedAttempts > 0 {
		t.Attempts = e.FailedAttempts + 1
		t.Flaky = store.Passed(e.Status)
	}
	return t
}

// cpuParallelism is CPU time over wall time, rounded to two decimals.
func cpuParallelism(e store.Execution) float64 {
	return Parallelism(e.Status, e.UserCPU+e.SysCPU, e.Duration)
}

// Parallelism is cpu over wall, rounded to two decimals; 0 for a hit (a restore, not the task).
func Parallelism(status store.Status, cpu, wall time.Duration) float64 {
	if wall <= 0 || status == store.StatusHit {
		return 0
	}
	return math.Round(float64(cpu)/float64(wall)*100) / 100
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
