package history

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"sort"
	"time"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
	"github.com/vzn/vx/engine/vxerr"
)

// Failure modes of a task.
const (
	FailureFlaky         = "flaky"         // one cache key both passed and failed
	FailureTimeout       = "timeout"       // every failure was a timeout
	FailureDeterministic = "deterministic" // failures, none of them a flake
)

// HistoryOptions narrow RunHistory.
type HistoryOptions struct {
	// Project keeps tasks of that project; Task keeps tasks of that name (not a project#task).
	Project, Task string
	// Limit is the most recent runs answered, clamped to 1..500 (0: 20).
	Limit int
}

// How much of the history History answers, so that a large workspace never floods a reader (an
// agent's context): a full run of 1,500 tasks would list every one of them in every run.
const (
	// RunTasksListed: a run with at most this many tasks (in the scope) lists them all; a larger
	// one lists only those that did not pass, as the run's footer does.
	RunTasksListed = 25
	// FooterTasksListed bounds the tasks that did not pass listed for one run.
	FooterTasksListed = 50
	// TaskStatsListed bounds the per-task statistics: failing tasks first, then the slowest.
	TaskStatsListed = 100
)

// RunHistory is getRunHistory's answer, in the original's shape: runs, the most recent executions
// one row each, and history, each task's statistics over every execution recorded of it; beside
// them vx's totals and invocations, the recent runs with their tasks' outcomes.
type RunHistory struct {
	// Limit is the limit applied, so that a truncated list cannot read as an exhausted one: the
	// most recent runs (invocations) and executions (runs) answered.
	Limit int `json:"limit"`
	// Totals count the runs of the window and the tasks with statistics, whatever the lists hold.
	Totals HistoryTotals `json:"totals"`
	// Runs are the recent runs (vx's invocations), newest first.
	Runs []HistoryRun `json:"invocations"`
	// Executions are the most recent executions of the scope, one row each, newest first.
	Executions []ExecutionRow `json:"runs"`
	// Tasks are the statistics of the tasks of those runs over every execution recorded of them,
	// the most recently run task first; at most TaskStatsListed.
	Tasks []TaskStats `json:"history"`
	// OmittedTasks counts the tasks whose statistics were left out (narrow with project or task).
	OmittedTasks int `json:"omittedTasks"`
	// Store names the folder the answer was read from: this checkout's history.
	Store Store `json:"store"`
}

// ExecutionRow is one execution as the original's getRunHistory lists it: startedAt and endedAt in
// epoch milliseconds, cacheHit for a hit.
type ExecutionRow struct {
	RunID      string       `json:"runId"`
	TaskID     string       `json:"taskId"`
	Project    string       `json:"project"`
	Task       string       `json:"task"`
	Status     store.Status `json:"status"`
	ExitCode   *int         `json:"exitCode"`
	CacheHit   bool         `json:"cacheHit"`
	DurationMs int64        `json:"durationMs"`
	StartedAt  int64        `json:"startedAt"`
	EndedAt    int64        `json:"endedAt"`
}

// executionRows answers the limit most recent executions of the scope, newest first.
func executionRows(ctx context.Context, st *store.Store, opts HistoryOptions, limit int) ([]ExecutionRow, error) {
	execs, err := st.TaskExecutions(ctx, store.ExecQuery{Project: opts.Project, Task: opts.Task, Limit: limit})
	if err != nil {
		return nil, err
	}
	rows := make([]ExecutionRow, len(execs))
	for i, e := range execs {
		rows[i] = ExecutionRow{RunID: e.RunID, TaskID: e.TaskID, Project: e.Project, Task: e.Task, Status: e.Status,
			ExitCode: e.ExitCode, CacheHit: e.Status == store.StatusHit, DurationMs: e.Duration.Milliseconds(),
			StartedAt: e.Started.UnixMilli(), EndedAt: e.Started.Add(e.Duration).UnixMilli()}
	}
	return rows, nil
}

// HistoryRun is one recent run.
type HistoryRun struct {
	RunID     string    `json:"runId"`
	Status    string    `json:"status"`
	OK        bool      `json:"ok"`
	ExitCode  int       `json:"exitCode"`
	StartedAt time.Time `json:"startedAt"`
	WallMs    int64     `json:"wallMs"`
	// Counts are the run's tasks (in the scope) by status.
	Counts map[store.Status]int `json:"counts"`
	// Tasks are all the run's tasks (in the scope) when there are at most RunTasksListed, else
	// those that did not pass (failed, timed out, blocked, skipped, cancelled, or with sandbox
	// violations), in the order they finished, at most FooterTasksListed.
	Tasks []HistoryTask `json:"tasks"`
	// OmittedTasks counts the run's tasks left out of Tasks.
	OmittedTasks int `json:"omittedTasks"`
	// Tags are the run's key=value labels (vx run --tag); absent for none.
	Tags map[string]string `json:"tags,omitempty"`
}

// HistoryTask is one task of a recent run, with why it failed or was skipped where that applies.
type HistoryTask struct {
	TaskID            string       `json:"taskId"`
	Status            store.Status `json:"status"`
	ExitCode          *int         `json:"exitCode"`
	DurationMs        int64        `json:"durationMs"`
	Hash              string       `json:"hash"`
	BlockedBy         *string      `json:"blockedBy,omitempty"`
	TimedOut          bool         `json:"timedOut,omitempty"`
	SandboxViolations []string     `json:"sandboxViolations,omitempty"`
	NotReady          []string     `json:"notReady,omitempty"`
}

// TaskStats are one task's statistics. Durations count executions that ran the command and passed
// (a hit's duration is a restore, a failure's says little of the task's).
type TaskStats struct {
	TaskID string `json:"taskId"`
	// ID is TaskID under the original's name.
	ID string `json:"id"`
	// Executions counts the task's recorded executions; Runs those that started its command or
	// restored it from the cache (not a blocked or skipped one).
	Executions int `json:"executions"`
	Runs       int `json:"runs"`
	// P50Ms and P99Ms are the duration percentiles of the executions that ran the command and
	// passed (CountsForDuration); null when none did in the window.
	P50Ms *int64 `json:"p50Ms"`
	P99Ms *int64 `json:"p99Ms"`
	// P50DurationMs and P99DurationMs are P50Ms and P99Ms under the original's names.
	P50DurationMs *int64 `json:"p50DurationMs"`
	P99DurationMs *int64 `json:"p99DurationMs"`
	// SuccessRate is passes over executions that reached a verdict; HitRate hits over executions
	// that consulted the cache. Null when there were none.
	SuccessRate *float64 `json:"successRate"`
	HitRate     *float64 `json:"hitRate"`
	// FailureMode is flaky, timeout or deterministic; null when the task never failed.
	FailureMode       *string      `json:"failureMode"`
	MaxPeakRssBytes   int64        `json:"maxPeakRssBytes"`
	MaxCPUParallelism float64      `json:"maxCpuParallelism"`
	LastStatus        store.Status `json:"lastStatus"`
}

// History answers recent runs and per-task statistics, bounded as the constants above say. It
// reads the index in one snapshot and never decodes an execution it does not answer: the runs'
// tasks are counted by status in the index, only the tasks listed are read whole, and the
// statistics read the few columns they use.
func historyOf(ctx context.Context, st *store.Store, opts HistoryOptions) (*RunHistory, error) {
	if opts.Task != "" {
		if _, _, isID := graph.SplitTaskID(opts.Task); isID || opts.Task[0] == '#' || opts.Task[len(opts.Task)-1] == '#' {
			return nil, vxerr.Usagef("task %q: want a task name, not a task id", opts.Task)
		}
	}
	limit := ClampLimit(opts.Limit)
	out := &RunHistory{Limit: limit, Totals: totalsOf(nil, nil), Runs: []HistoryRun{}, Executions: []ExecutionRow{}, Tasks: []TaskStats{}}
	err := st.Snapshot(ctx, func(sn *store.Snapshot) error {
		runs, err := sn.Runs(ctx, store.RunQuery{Limit: limit, Project: opts.Project, Task: opts.Task})
		if err != nil || len(runs) == 0 {
			return err
		}
		w := store.Window{Oldest: runs[len(runs)-1].ID, Newest: runs[0].ID, Project: opts.Project, Task: opts.Task}
		if out.Runs, err = historyRuns(ctx, sn, w, runs); err != nil {
			return err
		}
		// Every execution recorded of the scope's tasks, not only the window's runs.
		every := w
		every.Oldest = ""
		stats, err := windowStats(ctx, sn, every)
		out.Totals = totalsOf(out.Runs, stats)
		out.Tasks, out.OmittedTasks = cutStats(stats)
		return err
	})
	if err != nil {
		return nil, err
	}
	if out.Executions, err = executionRows(ctx, st, opts, limit); err != nil {
		return nil, err
	}
	return out, nil
}

// historyRuns answers the runs of the window, each with its tasks counted by status and listed
// as HistoryRun says.
func historyRuns(ctx context.Context, sn *store.Snapshot, w store.Window, runs []store.Run) ([]HistoryRun, error) {
	counts, err := sn.StatusCounts(ctx, w)
	if err != nil {
		return nil, err
	}
	total := func(runID string) int {
		n := 0
		for _, c := range counts[runID] {
			n += c
		}
		return n
	}
	var whole, part []string
	for _, r := range runs {
		switch n := total(r.ID); {
		case n == 0:
		case n <= RunTasksListed:
			whole = append(whole, r.ID)
		default:
			part = append(part, r.ID)
		}
	}
	listed, err := sn.ListedExecutions(ctx, w, whole, part)
	if err != nil {
		return nil, err
	}
	byRun := map[string][]store.Listed{}
	for _, e := range listed {
		byRun[e.RunID] = append(byRun[e.RunID], e)
	}
	out := make([]HistoryRun, 0, len(runs))
	for _, r := range runs {
		ok, exitCode, wallMs := summary.Outcome(r)
		hr := HistoryRun{RunID: r.ID, Status: r.Status, OK: ok, ExitCode: exitCode, StartedAt: r.Started.UTC(),
			WallMs: wallMs, Counts: counts[r.ID], Tasks: []HistoryTask{}, Tags: r.Tags}
		if hr.Counts == nil {
			hr.Counts = map[store.Status]int{}
		}
		for _, e := range byRun[r.ID] {
			if len(hr.Tasks) == FooterTasksListed {
				break
			}
			hr.Tasks = append(hr.Tasks, historyTask(e))
		}
		hr.OmittedTasks = total(r.ID) - len(hr.Tasks)
		out = append(out, hr)
	}
	return out, nil
}

func historyTask(e store.Listed) HistoryTask {
	ht := HistoryTask{TaskID: e.TaskID, Status: e.Status, ExitCode: e.ExitCode, DurationMs: e.Duration.Milliseconds(),
		Hash: e.Hash, TimedOut: e.TimedOut, SandboxViolations: e.SandboxViolations, NotReady: e.NotReady}
	if e.BlockedBy != "" {
		b := e.BlockedBy
		ht.BlockedBy = &b
	}
	return ht
}

// windowStats answers the statistics of the window's tasks, the most recently run task first.
func windowStats(ctx context.Context, sn *store.Snapshot, w store.Window) ([]TaskStats, error) {
	byTask := map[string]*taskAcc{}
	var order []string
	failing := false
	err := sn.EachExecStat(ctx, w, func(e store.ExecStat) {
		a := byTask[e.TaskID]
		if a == nil {
			// Newest run first: the first execution seen is the task's last status, and the
			// tasks are seen most recently run first.
			a = &taskAcc{lastStatus: e.Status}
			byTask[e.TaskID] = a
			order = append(order, e.TaskID)
		}
		a.add(e.Status, e.Duration, e.CPU, e.PeakRSSBytes)
		failing = failing || a.failed > 0
	})
	if err != nil {
		return nil, err
	}
	flaky := map[string]bool{}
	if failing {
		if flaky, err = sn.FlakyTasks(ctx, w); err != nil {
			return nil, err
		}
	}
	// A task that passed after failed attempts is flaky, though no run of it failed.
	retried, err := sn.RetriedPasses(ctx, w)
	if err != nil {
		return nil, err
	}
	maps.Copy(flaky, retried)
	stats := make([]TaskStats, 0, len(byTask))
	for _, id := range order {
		stats = append(stats, byTask[id].stats(id, flaky[id]))
	}
	return stats, nil
}

// cutStats cuts ranked statistics to TaskStatsListed and answers how many it cut.
func cutStats(stats []TaskStats) ([]TaskStats, int) {
	if len(stats) > TaskStatsListed {
		return stats[:TaskStatsListed], len(stats) - TaskStatsListed
	}
	return stats, 0
}

// taskAcc accumulates one task's executions into its statistics.
type taskAcc struct {
	lastStatus store.Status
	executions int
	// runs counts the executions that started (not blocked, not skipped).
	runs int
	// timed are the durations of the executions that count for the percentiles (CountsForDuration).
	timed []time.Duration
	// Executions that passed, reached a verdict, hit, consulted the cache, failed, timed out.
	passed, verdicts, hits, consulted, failed, timeouts int

	// The largest peak RSS and CPU parallelism of the executions that ran the command.
	maxPeakRSS     int64
	maxParallelism float64
}

func (a *taskAcc) add(status store.Status, dur, cpu time.Duration, peakRSS int64) {
	a.executions++
	if status != store.StatusBlocked && status != store.StatusSkipped {
		a.runs++
	}
	switch status {
	case store.StatusHit:
		a.hits++
		a.consulted++
		a.passed++
		a.verdicts++
	case store.StatusMiss:
		a.consulted++
		a.passed++
		a.verdicts++
	case store.StatusFailed, store.StatusTimedOut:
		a.consulted++
		a.verdicts++
		a.failed++
		if status == store.StatusTimedOut {
			a.timeouts++
		}
	}
	if CountsForDuration(status) {
		a.timed = append(a.timed, dur)
	}
	if status == store.StatusMiss || status == store.StatusFailed || status == store.StatusTimedOut {
		a.maxPeakRSS = max(a.maxPeakRSS, peakRSS)
		a.maxParallelism = math.Max(a.maxParallelism, summary.Parallelism(status, cpu, dur))
	}
}

// stats answers the statistics; flaky says whether one cache key both passed and failed.
func (a *taskAcc) stats(taskID string, flaky bool) TaskStats {
	s := TaskStats{TaskID: taskID, ID: taskID, Executions: a.executions, Runs: a.runs, LastStatus: a.lastStatus,
		MaxPeakRssBytes: a.maxPeakRSS, MaxCPUParallelism: a.maxParallelism}
	if len(a.timed) > 0 {
		p50, p99 := percentile(a.timed, 50), percentile(a.timed, 99)
		s.P50Ms, s.P99Ms, s.P50DurationMs, s.P99DurationMs = &p50, &p99, &p50, &p99
	}
	if a.verdicts > 0 {
		r := round3(float64(a.passed) / float64(a.verdicts))
		s.SuccessRate = &r
	}
	if a.consulted > 0 {
		r := round3(float64(a.hits) / float64(a.consulted))
		s.HitRate = &r
	}
	// A task that passed only after failed attempts (vx run --retry) failed too: flaky.
	if a.failed > 0 || flaky {
		mode := FailureDeterministic
		switch {
		case flaky:
			mode = FailureFlaky
		case a.timeouts == a.failed:
			mode = FailureTimeout
		}
		s.FailureMode = &mode
	}
	return s
}

// Stats computes one task's statistics from its executions, newest first.
func Stats(taskID string, execs []store.Execution) TaskStats {
	var a taskAcc
	if len(execs) > 0 {
		a.lastStatus = execs[0].Status
	}
	passKeys, failKeys := map[string]bool{}, map[string]bool{}
	for _, e := range execs {
		a.add(e.Status, e.Duration, e.UserCPU+e.SysCPU, e.PeakRSSBytes)
		switch {
		case store.Passed(e.Status):
			passKeys[e.Hash] = true
			if e.FailedAttempts > 0 && e.Hash != "" {
				failKeys[e.Hash] = true // it failed, then passed, in one run
			}
		case store.Failed(e.Status) && e.Hash != "":
			failKeys[e.Hash] = true
		}
	}
	flaky := false
	for k := range failKeys {
		flaky = flaky || passKeys[k]
	}
	return a.stats(taskID, flaky)
}

// CountsForDuration is the one definition of which executions a task's duration statistics (p50,
// p99: the plan's predictions, the history's statistics, the scheduler's priorities) are taken
// from: those that ran the command and passed, a miss. A hit ran nothing, and a failure or a
// timeout stopped anywhere: counting them would make a build's p50 the few milliseconds of its
// hits.
func CountsForDuration(status store.Status) bool { return status == store.StatusMiss }

// percentile is the nearest-rank percentile in milliseconds.
func percentile(ds []time.Duration, p int) int64 {
	sorted := append([]time.Duration(nil), ds...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	rank := int(math.Ceil(float64(p) / 100 * float64(len(sorted))))
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1].Milliseconds()
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// P50Window is how many of a task's last executions that ran its command the plan and the
// scheduler estimate from.
const P50Window = 50

// FlakyTasks answers the tasks of which one cache key both passed and failed, sorted.
func FlakyTasks(ctx context.Context, st *store.Store) ([]string, error) {
	return st.FlakyTasks(ctx)
}

// CacheStats is getCacheStats' answer (vx cache stats --format json): the original's names
// (scope, entryCount, totalBytes, runCountLast24h, hitCountLast24h, hitRate24h) and, beside them,
// vx's own (entries, runs24h, hits24h, hitRate), which carry the same numbers.
type CacheStats struct {
	// Scope is the project the numbers are narrowed to, "all" for the whole workspace.
	Scope           CacheScope `json:"scope"`
	EntryCount      int        `json:"entryCount"`
	TotalBytes      int64      `json:"totalBytes"`
	RunCountLast24h int        `json:"runCountLast24h"`
	HitCountLast24h int        `json:"hitCountLast24h"`
	HitRate24h      *float64   `json:"hitRate24h"`
	Entries         int        `json:"entries"`
	// Runs24h counts the task executions of the last 24 hours, of the scope, that ran their task
	// or took it from the cache (a blocked or skipped one ran nothing), as the original counts
	// them; Hits24h the hits among them; HitRate hits over executions that consulted the cache
	// (null: none).
	Runs24h int      `json:"runs24h"`
	Hits24h int      `json:"hits24h"`
	HitRate *float64 `json:"hitRate"`
	// RemoteHits24h counts, among Hits24h, the hits restored from the shared remote cache
	// (absent when none).
	RemoteHits24h int `json:"remoteHits24h,omitempty"`
	// Store names the folder the answer was read from: the shared store.
	Store Store `json:"store"`
}

// CacheScope narrows CacheStats: a project, or none (the whole workspace, written "all").
type CacheScope struct {
	Project string `json:"project"`
}

// UnmarshalJSON reads what MarshalJSON writes: "all", or {"project": NAME}.
func (c *CacheScope) UnmarshalJSON(b []byte) error {
	if string(b) == `"all"` || string(b) == "null" {
		*c = CacheScope{}
		return nil
	}
	var v struct {
		Project string `json:"project"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("cache scope %s: want \"all\" or {\"project\": NAME}", b)
	}
	*c = CacheScope{Project: v.Project}
	return nil
}

// MarshalJSON writes "all" for the whole workspace, else {"project": NAME}.
func (c CacheScope) MarshalJSON() ([]byte, error) {
	if c.Project == "" {
		return []byte(`"all"`), nil
	}
	return json.Marshal(struct {
		Project string `json:"project"`
	}{c.Project})
}

// Cache answers cache statistics, narrowed to project when not "". now is the clock.
func cacheOf(ctx context.Context, st *store.Store, project string, now time.Time) (*CacheStats, error) {
	c, err := st.CountCache(ctx, project, now.Add(-24*time.Hour))
	if err != nil {
		return nil, err
	}
	out := &CacheStats{Scope: CacheScope{Project: project}, Entries: c.Entries, TotalBytes: c.TotalBytes, Runs24h: c.ExecutionsSince, Hits24h: c.HitsSince}
	if out.RemoteHits24h, err = st.CountRemoteHits(ctx, project, now.Add(-24*time.Hour)); err != nil {
		return nil, err
	}
	if c.CacheableSince > 0 {
		r := round3(float64(c.HitsSince) / float64(c.CacheableSince))
		out.HitRate = &r
	}
	out.EntryCount, out.RunCountLast24h, out.HitCountLast24h, out.HitRate24h = out.Entries, out.Runs24h, out.Hits24h, out.HitRate
	return out, nil
}

// KeyInfo is explainCacheKey's answer: a task's latest cache entry, in the original's shape
// (taskId, project, task, latestEntry, note) and, beside it, vx's own flat fields of the entry,
// present only when there is one.
type KeyInfo struct {
	TaskID  string `json:"taskId"`
	Project string `json:"project"`
	Task    string `json:"task"`
	// Found is false when the task has no cache entry; LatestEntry is then null.
	Found       bool        `json:"found"`
	LatestEntry *EntryBrief `json:"latestEntry"`
	// Note says in a sentence what the answer means: the entry's age, why there is none, or
	// that the entry shown is not the current key's.
	Note string `json:"note"`

	Hash       string     `json:"hash,omitempty"`
	Command    string     `json:"command,omitempty"`
	ExitCode   int        `json:"exitCode"`
	DurationMs int64      `json:"durationMs,omitempty"`
	SizeBytes  int64      `json:"sizeBytes,omitempty"`
	Outputs    int        `json:"outputs,omitempty"`
	CreatedAt  *time.Time `json:"createdAt,omitempty"`
	LastUsedAt *time.Time `json:"lastUsedAt,omitempty"`
	// CurrentHash is the key the task's latest recorded run computed, and CurrentRunID that run;
	// absent when no run recorded one.
	CurrentHash  string `json:"currentHash,omitempty"`
	CurrentRunID string `json:"currentRunId,omitempty"`
	// Stale is true when the entry shown is not the current key's: that key has no entry.
	Stale bool `json:"stale,omitempty"`
	// NotCachedReason says why the latest run, which passed, stored no entry for its key.
	NotCachedReason string `json:"notCachedReason,omitempty"`
	// Store names the folder the answer was read from: the shared store.
	Store Store `json:"store"`
}

// EntryBrief is a cache entry as the original's explainCacheKey answers it: createdAt in epoch
// milliseconds.
type EntryBrief struct {
	Hash       string `json:"hash"`
	Command    string `json:"command"`
	ExitCode   int    `json:"exitCode"`
	DurationMs int64  `json:"durationMs"`
	SizeBytes  int64  `json:"sizeBytes"`
	CreatedAt  int64  `json:"createdAt"`
}

// latestEntryOf answers the entry of the key the task's latest recorded run computed, else the
// task's most recent entry, saying that it is not the current key's.
func latestEntryOf(ctx context.Context, st *store.Store, taskID string) (*KeyInfo, error) {
	if _, _, ok := graph.SplitTaskID(taskID); !ok {
		return nil, vxerr.Usagef("task id %q: want project#task", taskID)
	}
	cur, ok, err := latestKeyed(ctx, st, taskID)
	if err != nil {
		return nil, err
	}
	if ok {
		e, found, err := st.Entry(ctx, cur.Hash)
		if err != nil {
			return nil, err
		}
		if found {
			info := keyInfo(taskID, e)
			info.CurrentHash, info.CurrentRunID = cur.Hash, cur.RunID
			return info, nil
		}
	}
	entries, err := st.Entries(ctx, store.EntryQuery{TaskID: taskID, Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		info := &KeyInfo{TaskID: taskID, Note: "no cache entry: the task has not passed with its cache on, or its entries were pruned"}
		info.Project, info.Task, _ = graph.SplitTaskID(taskID)
		if ok {
			info.CurrentHash, info.CurrentRunID, info.NotCachedReason = cur.Hash, cur.RunID, cur.NotCached
		}
		return info, nil
	}
	info := keyInfo(taskID, entries[0])
	if ok {
		info.CurrentHash, info.CurrentRunID, info.NotCachedReason = cur.Hash, cur.RunID, cur.NotCached
		info.Stale = true
		info.Note = "this entry is of an older key: run " + cur.RunID + " computed " + cur.Hash + ", which has no entry"
		if cur.NotCached != "" {
			info.Note += " (not cached: " + cur.NotCached + ")"
		}
	}
	return info, nil
}

// keyInfo answers the KeyInfo of task taskID's entry e, in the original's shape and vx's.
func keyInfo(taskID string, e store.Entry) *KeyInfo {
	info := &KeyInfo{TaskID: taskID}
	info.Project, info.Task, _ = graph.SplitTaskID(taskID)
	created, used := e.Created.UTC(), e.LastUsed.UTC()
	info.Found, info.Hash, info.Command, info.ExitCode = true, e.Hash, e.Command, e.ExitCode
	info.DurationMs, info.SizeBytes, info.Outputs = e.Duration.Milliseconds(), e.Size, len(e.Outputs)
	info.CreatedAt, info.LastUsedAt = &created, &used
	info.LatestEntry = &EntryBrief{Hash: e.Hash, Command: e.Command, ExitCode: e.ExitCode,
		DurationMs: info.DurationMs, SizeBytes: e.Size, CreatedAt: created.UnixMilli()}
	info.Note = fmt.Sprintf("the latest of the task's cache entries, created %s; a run whose key is this hash hits", created.Format(time.RFC3339))
	return info
}

// latestKeyed answers the task's latest recorded execution with a key; ok is false when none
// has one.
func latestKeyed(ctx context.Context, st *store.Store, taskID string) (store.Execution, bool, error) {
	execs, err := st.TaskExecutions(ctx, store.ExecQuery{TaskID: taskID, Limit: 50})
	if err != nil {
		return store.Execution{}, false, err
	}
	for _, e := range execs {
		if e.Hash != "" {
			return e, true, nil
		}
	}
	return store.Execution{}, false, nil
}

// History is historyOf with the answer's store named (checkout).
func History(ctx context.Context, st *store.Store, opts HistoryOptions) (*RunHistory, error) {
	out, err := historyOf(ctx, st, opts)
	if out != nil {
		out.Store = checkoutStore(st)
	}
	return out, err
}

// Cache is cacheOf with the answer's store named (shared).
func Cache(ctx context.Context, st *store.Store, project string, now time.Time) (*CacheStats, error) {
	out, err := cacheOf(ctx, st, project, now)
	if out != nil {
		out.Store = sharedStore(st)
	}
	return out, err
}

// LatestEntry is latestEntryOf with the answer's store named (shared).
func LatestEntry(ctx context.Context, st *store.Store, taskID string) (*KeyInfo, error) {
	out, err := latestEntryOf(ctx, st, taskID)
	if out != nil {
		out.Store = sharedStore(st)
	}
	return out, err
}
