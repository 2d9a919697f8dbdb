package history

import (
	"context"
	"math"
	"sort"
	"time"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/store"
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

// RunHistory is getRunHistory's answer: recent runs with each task's outcome, and statistics per
// task over the executions of those runs.
type RunHistory struct {
	// Limit is the limit applied, so that a truncated list cannot read as an exhausted one.
	Limit int          `json:"limit"`
	Runs  []HistoryRun `json:"runs"`
	Tasks []TaskStats  `json:"tasks"`
}

// HistoryRun is one recent run.
type HistoryRun struct {
	RunID     string        `json:"runId"`
	Status    string        `json:"status"`
	OK        bool          `json:"ok"`
	ExitCode  int           `json:"exitCode"`
	StartedAt time.Time     `json:"startedAt"`
	WallMs    int64         `json:"wallMs"`
	Tasks     []HistoryTask `json:"tasks"`
}

// HistoryTask is one task of a recent run, with why it failed or was skipped where that applies.
type HistoryTask struct {
	TaskID            string   `json:"taskId"`
	Status            string   `json:"status"`
	ExitCode          *int     `json:"exitCode"`
	DurationMs        int64    `json:"durationMs"`
	Hash              string   `json:"hash"`
	BlockedBy         *string  `json:"blockedBy,omitempty"`
	TimedOut          bool     `json:"timedOut,omitempty"`
	SandboxViolations []string `json:"sandboxViolations,omitempty"`
	NotReady          []string `json:"notReady,omitempty"`
}

// TaskStats are one task's statistics. Durations count executions that ran the command (a hit's
// duration is a restore, not the task's).
type TaskStats struct {
	TaskID     string `json:"taskId"`
	Executions int    `json:"executions"`
	// P50Ms and P99Ms are null when the task never ran in the window.
	P50Ms *int64 `json:"p50Ms"`
	P99Ms *int64 `json:"p99Ms"`
	// SuccessRate is passes over executions that reached a verdict; HitRate hits over executions
	// that consulted the cache. Null when there were none.
	SuccessRate *float64 `json:"successRate"`
	HitRate     *float64 `json:"hitRate"`
	// FailureMode is flaky, timeout or deterministic; null when the task never failed.
	FailureMode       *string `json:"failureMode"`
	MaxPeakRssBytes   int64   `json:"maxPeakRssBytes"`
	MaxCpuParallelism float64 `json:"maxCpuParallelism"`
	LastStatus        string  `json:"lastStatus"`
}

// History answers recent runs and per-task statistics.
func History(ctx context.Context, st *store.Store, opts HistoryOptions) (*RunHistory, error) {
	if opts.Task != "" {
		if _, _, isID := graph.SplitTaskID(opts.Task); isID || opts.Task[0] == '#' || opts.Task[len(opts.Task)-1] == '#' {
			return nil, vxerr.Usagef("task %q: want a task name, not a task id", opts.Task)
		}
	}
	limit := ClampLimit(opts.Limit)
	runs, err := st.Runs(ctx, store.RunQuery{Limit: limit, Project: opts.Project, Task: opts.Task})
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	byRun, err := st.ExecutionsOfRuns(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := &RunHistory{Limit: limit, Runs: make([]HistoryRun, 0, len(runs)), Tasks: []TaskStats{}}
	perTask := map[string][]store.Execution{}
	for _, r := range runs {
		all := byRun[r.ID]
		s := Summarize(r, all)
		hr := HistoryRun{RunID: r.ID, Status: r.Status, OK: s.OK, ExitCode: s.ExitCode, StartedAt: s.StartedAt,
			WallMs: s.Totals.WallMs, Tasks: []HistoryTask{}}
		for _, e := range all {
			if (opts.Project != "" && e.Project != opts.Project) || (opts.Task != "" && e.Task != opts.Task) {
				continue
			}
			ht := HistoryTask{TaskID: e.TaskID, Status: e.Status, ExitCode: e.ExitCode, DurationMs: e.Duration.Milliseconds(),
				Hash: e.Hash, TimedOut: e.TimedOut, SandboxViolations: e.SandboxViolations, NotReady: e.NotReady}
			if e.BlockedBy != "" {
				b := e.BlockedBy
				ht.BlockedBy = &b
			}
			hr.Tasks = append(hr.Tasks, ht)
			perTask[e.TaskID] = append(perTask[e.TaskID], e)
		}
		out.Runs = append(out.Runs, hr)
	}
	for _, id := range sortedKeys(perTask) {
		out.Tasks = append(out.Tasks, Stats(id, perTask[id]))
	}
	return out, nil
}

// Stats computes one task's statistics from its executions, newest first.
func Stats(taskID string, execs []store.Execution) TaskStats {
	s := TaskStats{TaskID: taskID, Executions: len(execs)}
	if len(execs) > 0 {
		s.LastStatus = execs[0].Status
	}
	var ran []time.Duration
	passed, verdicts, hits, consulted := 0, 0, 0, 0
	failed, timeouts := 0, 0
	passKeys, failKeys := map[string]bool{}, map[string]bool{}
	for _, e := range execs {
		switch e.Status {
		case StatusHit:
			hits++
			consulted++
			passed++
			verdicts++
			passKeys[e.Hash] = true
		case StatusMiss:
			consulted++
			passed++
			verdicts++
			passKeys[e.Hash] = true
		case StatusFailed, StatusTimedOut:
			consulted++
			verdicts++
			failed++
			if e.Status == StatusTimedOut {
				timeouts++
			}
			if e.Hash != "" {
				failKeys[e.Hash] = true
			}
		}
		if e.Status == StatusMiss || e.Status == StatusFailed || e.Status == StatusTimedOut {
			ran = append(ran, e.Duration)
			s.MaxPeakRssBytes = max(s.MaxPeakRssBytes, e.PeakRSSBytes)
			s.MaxCpuParallelism = math.Max(s.MaxCpuParallelism, cpuParallelism(e))
		}
	}
	if len(ran) > 0 {
		p50, p99 := percentile(ran, 50), percentile(ran, 99)
		s.P50Ms, s.P99Ms = &p50, &p99
	}
	if verdicts > 0 {
		r := round3(float64(passed) / float64(verdicts))
		s.SuccessRate = &r
	}
	if consulted > 0 {
		r := round3(float64(hits) / float64(consulted))
		s.HitRate = &r
	}
	if failed > 0 {
		mode := FailureDeterministic
		flaky := false
		for k := range failKeys {
			if passKeys[k] {
				flaky = true
			}
		}
		switch {
		case flaky:
			mode = FailureFlaky
		case timeouts == failed:
			mode = FailureTimeout
		}
		s.FailureMode = &mode
	}
	return s
}

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

// P50s answers, for each task id, the median duration of its last executions that ran the command
// (up to 50), for planning. Tasks that never ran are absent.
func P50s(ctx context.Context, st *store.Store, taskIDs []string) (map[string]int64, error) {
	out := map[string]int64{}
	if st.Empty() {
		return out, nil
	}
	for _, id := range taskIDs {
		execs, err := st.TaskExecutions(ctx, store.ExecQuery{TaskID: id, Limit: 50})
		if err != nil {
			return nil, err
		}
		var ran []time.Duration
		for _, e := range execs {
			if e.Status == StatusMiss || e.Status == StatusFailed {
				ran = append(ran, e.Duration)
			}
		}
		if len(ran) > 0 {
			out[id] = percentile(ran, 50)
		}
	}
	return out, nil
}

// FlakyTasks answers the tasks of which one cache key both passed and failed, sorted.
func FlakyTasks(ctx context.Context, st *store.Store) ([]string, error) {
	return st.FlakyTasks(ctx)
}

// CacheStats is getCacheStats' answer.
type CacheStats struct {
	// Scope is the project the numbers are narrowed to, null for the whole workspace.
	Scope      *CacheScope `json:"scope"`
	Entries    int         `json:"entries"`
	TotalBytes int64       `json:"totalBytes"`
	// Runs24h counts runs in the last 24 hours (that ran a task of the scope); Hits24h the hits
	// among their executions; HitRate hits over executions that consulted the cache (null: none).
	Runs24h int      `json:"runs24h"`
	Hits24h int      `json:"hits24h"`
	HitRate *float64 `json:"hitRate"`
}

// CacheScope narrows CacheStats.
type CacheScope struct {
	Project string `json:"project"`
}

// Cache answers cache statistics, narrowed to project when not "". now is the clock.
func Cache(ctx context.Context, st *store.Store, project string, now time.Time) (*CacheStats, error) {
	c, err := st.CountCache(ctx, project, now.Add(-24*time.Hour))
	if err != nil {
		return nil, err
	}
	out := &CacheStats{Entries: c.Entries, TotalBytes: c.TotalBytes, Runs24h: c.RunsSince, Hits24h: c.HitsSince}
	if project != "" {
		out.Scope = &CacheScope{Project: project}
	}
	if c.CacheableSince > 0 {
		r := round3(float64(c.HitsSince) / float64(c.CacheableSince))
		out.HitRate = &r
	}
	return out, nil
}

// KeyInfo is explainCacheKey's answer: a task's latest cache entry.
type KeyInfo struct {
	TaskID string `json:"taskId"`
	// Found is false when the task has no cache entry; the other fields are then empty.
	Found      bool      `json:"found"`
	Hash       string    `json:"hash"`
	Command    string    `json:"command"`
	ExitCode   int       `json:"exitCode"`
	DurationMs int64     `json:"durationMs"`
	SizeBytes  int64     `json:"sizeBytes"`
	Outputs    int       `json:"outputs"`
	CreatedAt  time.Time `json:"createdAt"`
	LastUsedAt time.Time `json:"lastUsedAt"`
}

// LatestEntry answers the task's most recent cache entry.
func LatestEntry(ctx context.Context, st *store.Store, taskID string) (*KeyInfo, error) {
	if _, _, ok := graph.SplitTaskID(taskID); !ok {
		return nil, vxerr.Usagef("task id %q: want project#task", taskID)
	}
	entries, err := st.Entries(ctx, store.EntryQuery{TaskID: taskID, Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return &KeyInfo{TaskID: taskID}, nil
	}
	e := entries[0]
	return &KeyInfo{TaskID: taskID, Found: true, Hash: e.Hash, Command: e.Command, ExitCode: e.ExitCode,
		DurationMs: e.Duration.Milliseconds(), SizeBytes: e.Size, Outputs: len(e.Outputs),
		CreatedAt: e.Created.UTC(), LastUsedAt: e.LastUsed.UTC()}, nil
}
