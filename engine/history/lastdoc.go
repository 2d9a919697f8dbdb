package history

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
)

// RunDoc is `vx last --format json` (and `vx last --out FILE.json`): the run summary vx run
// prints, with the original's `invocation` beside it and each row of `tasks` carrying the
// original's fields as well as vx's. Where the original gives a name another shape (a row's
// exitCode, sandboxViolations, notReady), the row holds the original's, and vx's under exitStatus,
// sandboxViolationList and notReadyTasks.
type RunDoc struct {
	Summary    *summary.Summary
	Invocation Invocation
	// Rows are the original's fields of each task, in the summary's order.
	Rows []RunRow
}

// Invocation is a run as the original's `vx last` answers it (an invocation), vx's own figures
// beside: its status, exit status, arguments and totals.
type Invocation struct {
	RunID          string   `json:"runId"`
	Command        string   `json:"command"`
	RequestedTasks []string `json:"requestedTasks"`
	// CachePolicy is "force" when the run ignored its hits (vx run --force), else "read-write".
	CachePolicy string `json:"cachePolicy"`
	Concurrency int    `json:"concurrency"`
	// Flow is the original's focused or broad run, which vx does not have: null.
	Flow *string `json:"flow"`
	// StartedAt and EndedAt are epoch milliseconds; EndedAt is StartedAt while the run runs.
	StartedAt       int64 `json:"startedAt"`
	EndedAt         int64 `json:"endedAt"`
	TotalDurationMs int64 `json:"totalDurationMs"`
	TaskCount       int   `json:"taskCount"`
	FailedCount     int   `json:"failedCount"`
	HitCount        int   `json:"hitCount"`
	HitLocalCount   int   `json:"hitLocalCount"`
	HitRemoteCount  int   `json:"hitRemoteCount"`
	ExitOK          bool  `json:"exitOk"`
	// CommitSHA and Branch are HEAD's as the run began (null outside git, Branch null when
	// detached), CI and CIProvider the CI service the environment named, OS and Arch the system
	// vx ran on, VxVersion its version (null and empty for a run recorded before vx kept them).
	// Dirty is null: vx does not run git status for a run, which would cost every run a scan of
	// the whole tree.
	CommitSHA  *string           `json:"commitSha"`
	Branch     *string           `json:"branch"`
	Dirty      *bool             `json:"dirty"`
	CI         bool              `json:"ci"`
	CIProvider *string           `json:"ciProvider"`
	Host       *string           `json:"host"`
	OS         *string           `json:"os"`
	Arch       *string           `json:"arch"`
	VxVersion  string            `json:"vxVersion"`
	Tags       map[string]string `json:"tags"`
	// vx's: the run's status (ok, failed, cancelled, running, interrupted), vx run's exit status,
	// its arguments and its tasks counted by status.
	Status   string         `json:"status"`
	ExitCode int            `json:"exitCode"`
	Args     []string       `json:"args"`
	Totals   summary.Totals `json:"totals"`
}

// RunRow is the original's fields of a task of a run that vx's summary row does not hold, or holds
// in another shape.
type RunRow struct {
	RunID string `json:"runId"`
	// ExitCode is the command's exit status: 0 for a hit (its entry's run passed), -1 where no
	// process ran or a signal ended it.
	ExitCode  int   `json:"exitCode"`
	StartedAt int64 `json:"startedAt"`
	EndedAt   int64 `json:"endedAt"`
	CacheHit  *bool `json:"cacheHit"`
	// Cached is null: the index does not keep whether the task declares a cache.
	Cached *bool `json:"cached"`
	// CPUMs is the command's CPU time (user and system), null where none ran.
	CPUMs *int64 `json:"cpuMs"`
	// WallclockStartNs and WallclockEndNs are decimal nanoseconds from the run's start.
	WallclockStartNs *string `json:"wallclockStartNs"`
	WallclockEndNs   *string `json:"wallclockEndNs"`
	// SandboxViolations counts what the task did outside its sandbox; NotReady is, for a
	// persistent task that never became ready, "exited" when its process ended by itself and
	// "timeout" when vx stopped it after its wait; null for every other task.
	SandboxViolations int     `json:"sandboxViolations"`
	NotReady          *string `json:"notReady"`
	// vx's shapes of the names above: the exit status (null where no process ran), what the task
	// did outside its sandbox, and the tasks a skipped task waited for.
	ExitStatus           *int     `json:"exitStatus"`
	SandboxViolationList []string `json:"sandboxViolationList"`
	NotReadyTasks        []string `json:"notReadyTasks"`
}

// LastRun answers `vx last`'s document of a run: runID (whole or a unique prefix), or the latest
// run when "". With no run recorded it is a usage error saying so.
func LastRun(ctx context.Context, st *store.Store, runID string) (*RunDoc, error) {
	run, execs, err := lastRun(ctx, st, runID)
	if err != nil {
		return nil, err
	}
	s := summary.Summarize(run, execs)
	doc := &RunDoc{Summary: s, Invocation: invocationOf(run, s), Rows: make([]RunRow, len(execs))}
	for i, e := range execs {
		doc.Rows[i] = rowOf(run, e)
	}
	return doc, nil
}

// invocationOf is the invocation of run, whose summary (its totals at least) is s.
func invocationOf(run store.Run, s *summary.Summary) Invocation {
	inv := Invocation{RunID: run.ID, Command: strings.Join(append([]string{"vx"}, run.Args...), " "),
		RequestedTasks: nonNilStrings(run.Requested), CachePolicy: "read-write", Concurrency: run.Concurrency,
		StartedAt: run.Started.UnixMilli(), EndedAt: run.Started.UnixMilli(), TotalDurationMs: s.Totals.WallMs,
		TaskCount: s.Totals.Tasks, FailedCount: s.Totals.Failed, HitCount: s.Totals.Hits,
		HitLocalCount: s.Totals.Hits - s.Totals.RemoteHits, HitRemoteCount: s.Totals.RemoteHits, ExitOK: s.OK,
		Tags: run.Tags, Status: run.Status, ExitCode: s.ExitCode, Args: nonNilStrings(run.Args), Totals: s.Totals}
	if s.Totals.Forced > 0 {
		inv.CachePolicy = "force"
	}
	if !run.Finished.IsZero() {
		inv.EndedAt = run.Finished.UnixMilli()
	}
	if run.Host != "" {
		host := run.Host
		inv.Host = &host
	}
	if inv.Tags == nil {
		inv.Tags = map[string]string{}
	}
	rc := run.Context
	inv.CommitSHA, inv.Branch = orNull(rc.CommitSHA), orNull(rc.Branch)
	inv.CI, inv.CIProvider = rc.CI, orNull(rc.CIProvider)
	inv.OS, inv.Arch, inv.VxVersion = orNull(rc.OS), orNull(rc.Arch), rc.VxVersion
	return inv
}

// orNull is s, or null when empty.
func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// rowOf is the original's fields of the execution e of run.
func rowOf(run store.Run, e store.Execution) RunRow {
	status := e.Reported()
	r := RunRow{RunID: e.RunID, ExitCode: -1, ExitStatus: e.ExitCode, SandboxViolations: len(e.SandboxViolations),
		SandboxViolationList: nonNilStrings(e.SandboxViolations), NotReadyTasks: nonNilStrings(e.NotReady)}
	hit := status == store.StatusHit
	r.CacheHit = &hit
	switch {
	case hit:
		r.ExitCode = 0
	case e.ExitCode != nil:
		r.ExitCode = *e.ExitCode
	}
	started := e.Started
	if started.IsZero() {
		started = run.Started
	}
	r.StartedAt, r.EndedAt = started.UnixMilli(), started.Add(e.Duration).UnixMilli()
	if !e.Started.IsZero() && !run.Started.IsZero() {
		from, to := nanos(e.Started.Sub(run.Started)), nanos(e.Started.Add(e.Duration).Sub(run.Started))
		r.WallclockStartNs, r.WallclockEndNs = &from, &to
	}
	if ran := status != store.StatusHit && status != store.StatusBlocked && status != store.StatusSkipped; ran {
		cpu := (e.UserCPU + e.SysCPU).Milliseconds()
		r.CPUMs = &cpu
	}
	for _, id := range e.NotReady {
		if id == e.TaskID {
			// vx stops a server its readiness wait gave up on: it has no exit status of its own.
			why := "timeout"
			if e.ExitCode != nil {
				why = "exited"
			}
			r.NotReady = &why
		}
	}
	return r
}

// nanos is d in decimal nanoseconds.
func nanos(d time.Duration) string { return strconv.FormatInt(d.Nanoseconds(), 10) }

// nonNilStrings is l, or an empty list for nil.
func nonNilStrings(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// MarshalJSON writes the summary with `invocation` after its fields and each row of `tasks` with
// the original's fields: a summary field the original names otherwise takes the original's value
// in place, the others follow.
func (d *RunDoc) MarshalJSON() ([]byte, error) {
	rows := make([]json.RawMessage, len(d.Summary.Tasks))
	for i, t := range d.Summary.Tasks {
		row, err := withFields(t, d.Rows[i])
		if err != nil {
			return nil, err
		}
		rows[i] = row
	}
	return withFields(d.Summary, struct {
		Tasks      []json.RawMessage `json:"tasks"`
		Invocation Invocation        `json:"invocation"`
	}{rows, d.Invocation})
}

// withFields answers the JSON object of base with the fields of the JSON object of extra: a field
// base has takes extra's value where it stands, the others follow in extra's order.
func withFields(base, extra any) (json.RawMessage, error) {
	b, err := objectFields(base)
	if err != nil {
		return nil, err
	}
	x, err := objectFields(extra)
	if err != nil {
		return nil, err
	}
	byName := map[string]json.RawMessage{}
	for _, f := range x {
		byName[f.name] = f.value
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	write := func(f jsonField) {
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		name, _ := json.Marshal(f.name)
		buf.Write(name)
		buf.WriteByte(':')
		buf.Write(f.value)
	}
	for _, f := range b {
		if v, ok := byName[f.name]; ok {
			f.value = v
			delete(byName, f.name)
		}
		write(f)
	}
	for _, f := range x {
		if _, ok := byName[f.name]; ok {
			write(f)
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// jsonField is one member of a JSON object.
type jsonField struct {
	name  string
	value json.RawMessage
}

// objectFields answers the members of v's JSON object, in order.
func objectFields(v any) ([]jsonField, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("encode run: %T is not a JSON object", v)
	}
	var out []jsonField
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("encode run: %w", err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("encode run: %w", err)
		}
		out = append(out, jsonField{name: tok.(string), value: raw})
	}
	return out, nil
}
