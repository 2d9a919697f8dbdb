package graphview

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/logtext"
	"github.com/vzn/vx/engine/mask"
	"github.com/vzn/vx/engine/runlanes"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
)

// logExcerptBytes bounds the log excerpt a run's page keeps of each failed task (its head and
// tail, as logtext.CutTo keeps them): `vx last --log` prints the whole.
const logExcerptBytes = 16 << 10

// Run is the data of a run's page (`vx last --format html`): a recorded run's tasks in time, each
// on the lane it ran on.
type Run struct {
	// Kind is "run".
	Kind      string         `json:"kind"`
	RunID     string         `json:"runId"`
	Status    string         `json:"status"`
	OK        bool           `json:"ok"`
	ExitCode  int            `json:"exitCode"`
	StartedAt time.Time      `json:"startedAt"`
	Requested []string       `json:"requested"`
	Totals    summary.Totals `json:"totals"`
	// SpanMs is the time the page shows: the run's wall time, or its tasks' when longer (a run
	// that died has no end).
	SpanMs int64 `json:"spanMs"`
	// Lanes is how many lanes the tasks took: the lowest free one when each started.
	Lanes int   `json:"lanes"`
	Tasks []Bar `json:"tasks"`
	// CriticalPath is the chain of tasks that ended last, each waiting on the one before it.
	CriticalPath []string `json:"criticalPath"`
}

// Bar is one task of a run's page: its summary row, and where it lies in time.
type Bar struct {
	summary.TaskResult
	// Lane is the lane it ran on, -1 for a task that never started (blocked, skipped).
	Lane int `json:"lane"`
	// StartMs is when it started, from the run's start.
	StartMs int64 `json:"startMs"`
	// Command and DependsOn are its key's manifest's ("" and empty when none was kept).
	Command   string   `json:"command"`
	DependsOn []string `json:"dependsOn"`
	Critical  bool     `json:"critical"`
	// Log is, for a task that failed or timed out, an excerpt of what it printed, masked.
	Log *logtext.Text `json:"log,omitempty"`
}

// RunTimeline answers the page data of runID (whole or a unique prefix; "" for the latest run):
// its summary's tasks on the lanes they ran on, the critical path, the failures' log excerpts
// masked by m. It reads the index only.
func RunTimeline(ctx context.Context, st *store.Store, runID string, m *mask.Masker) (*Run, error) {
	sum, err := history.Last(ctx, st, runID)
	if err != nil {
		return nil, err
	}
	execs, err := st.Executions(ctx, sum.RunID)
	if err != nil {
		return nil, err
	}
	failures, err := history.FailedTasks(ctx, st, sum.RunID, m)
	if err != nil {
		return nil, err
	}
	logs := map[string]logtext.Text{}
	for _, f := range failures.Failures {
		logs[f.TaskID] = logtext.CutTo(f.Plain, logExcerptBytes)
	}
	started := map[string]time.Time{}
	for _, e := range execs {
		started[e.TaskID] = e.Started
	}
	r := &Run{Kind: "run", RunID: sum.RunID, Status: sum.Status, OK: sum.OK, ExitCode: sum.ExitCode, StartedAt: sum.StartedAt,
		Requested: sum.Requested, Totals: sum.Totals, SpanMs: sum.Totals.WallMs, Tasks: make([]Bar, 0, len(sum.Tasks))}
	var spans []runlanes.Span
	var ran []int
	for _, t := range sum.Tasks {
		b := Bar{TaskResult: t, Lane: -1, StartMs: max(0, started[t.TaskID].Sub(sum.StartedAt).Milliseconds()), DependsOn: []string{}}
		if t.Hash != "" {
			if b.Command, b.DependsOn, err = fromManifest(ctx, st, t.Hash); err != nil {
				return nil, err
			}
		}
		if log, ok := logs[t.TaskID]; ok {
			b.Log = &log
		}
		if startedWork(t.Status) {
			ran = append(ran, len(r.Tasks))
			spans = append(spans, runlanes.Span{ID: t.TaskID, Start: started[t.TaskID],
				End: started[t.TaskID].Add(time.Duration(t.DurationMs) * time.Millisecond)})
		}
		r.SpanMs = max(r.SpanMs, b.StartMs+b.DurationMs)
		r.Tasks = append(r.Tasks, b)
	}
	lanes, n := runlanes.Lanes(spans)
	r.Lanes = n
	deps := map[string][]string{}
	for k, i := range ran {
		r.Tasks[i].Lane = lanes[k]
		deps[r.Tasks[i].TaskID] = r.Tasks[i].DependsOn
	}
	r.CriticalPath = runlanes.CriticalPath(spans, func(id string) []string { return deps[id] })
	onPath := map[string]bool{}
	for _, id := range r.CriticalPath {
		onPath[id] = true
	}
	for i := range r.Tasks {
		r.Tasks[i].Critical = onPath[r.Tasks[i].TaskID]
	}
	return r, nil
}

// startedWork says whether a task of that status took a worker: every one but a blocked or a
// skipped one.
func startedWork(s store.Status) bool {
	return s != store.StatusBlocked && s != store.StatusSkipped
}

// fromManifest answers the command and the dependencies of the task whose key is hash, as its
// manifest keeps them; nothing when none was kept.
func fromManifest(ctx context.Context, st *store.Store, hash string) (command string, deps []string, err error) {
	data, ok, err := st.Manifest(ctx, hash)
	if err != nil || !ok {
		return "", []string{}, err
	}
	m, err := hasher.ParseManifest(data)
	if err != nil {
		return "", []string{}, nil // an unreadable manifest tells nothing; the page still draws
	}
	return m.Command, nonNil(slices.Sorted(maps.Keys(m.Deps))), nil
}
