// Package chrometrace writes a run's profile, `vx run --profile=FILE`, as Chrome trace-event JSON:
// the format chrome://tracing and ui.perfetto.dev open. A Recorder (a span.Recorder) collects what
// the run marks; Write lays it out: a track per lane (the lowest free when a task starts), a
// complete event per task (its duration the summary's, exactly) with its status, cache source
// and key as args, vx's own phases nested on the task's lane or on vx's own track, the work that
// ran beside the run (a git listing, uploads) on tracks of their own, and counters of the running
// tasks and the memory they reserved.
package chrometrace

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/vzn/vx/engine/profilerec"
	"github.com/vzn/vx/engine/runlanes"
)

// Recorder collects a run's spans and task timings; it is safe for concurrent use.
type Recorder struct {
	now   func() time.Time
	mu    sync.Mutex
	spans []profilerec.Span
	tasks []profilerec.Task
}

// New returns a Recorder timing spans by now (nil: time.Now).
func New(now func() time.Time) *Recorder {
	if now == nil {
		now = time.Now
	}
	return &Recorder{now: now}
}

// Now is the recorder's clock.
func (r *Recorder) Now() time.Time { return r.now() }

// Span keeps one ended span.
func (r *Recorder) Span(s profilerec.Span) {
	r.mu.Lock()
	r.spans = append(r.spans, s)
	r.mu.Unlock()
}

// Task keeps one task's timing.
func (r *Recorder) Task(t profilerec.Task) {
	r.mu.Lock()
	r.tasks = append(r.tasks, t)
	r.mu.Unlock()
}

// Meta says what a trace is of.
type Meta struct {
	RunID string
	// Args is vx's command line.
	Args []string
	// Workers and MemoryBudget are the run's worker count and memory budget in bytes.
	Workers      int
	MemoryBudget int64
}

// Trace is the JSON object Write writes (the trace-event format's object form).
type Trace struct {
	TraceEvents     []Event        `json:"traceEvents"`
	DisplayTimeUnit string         `json:"displayTimeUnit"`
	OtherData       map[string]any `json:"otherData"`
}

// Event is one trace event. TS and Dur are microseconds from the trace's start.
type Event struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	TS   int64          `json:"ts"`
	Dur  *int64         `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Args map[string]any `json:"args,omitempty"`
}

// The categories of the complete events: a task, a phase of vx's own work, the run as a whole.
const (
	CatTask  = "task"
	CatPhase = "vx"
	CatRun   = "run"
)

// The tracks (thread ids) of the trace: vx's own, the tasks that never started, the work beside
// the run from besideTid on, and the lanes from laneTid on (lane 1 is laneTid).
const (
	pid       = 1
	vxTid     = 1
	notRunTid = 2
	besideTid = 10
	laneTid   = 100
)

// Write writes the trace of what was recorded, its events sorted (by track, then time, a parent
// before what it holds), so that the same run writes the same bytes.
func (r *Recorder) Write(w io.Writer, meta Meta) error {
	r.mu.Lock()
	tr := build(r.spans, r.tasks, meta)
	r.mu.Unlock()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(tr); err != nil {
		return fmt.Errorf("write the trace: %w", err)
	}
	return nil
}

// layout is the clock of a trace being built: its start, and the events so far.
type layout struct {
	t0     time.Time
	events []Event
}

// us is t in microseconds from the trace's start.
func (l *layout) us(t time.Time) int64 { return int64(t.Sub(l.t0) / time.Microsecond) }

// complete adds a complete event from start to end, both converted (so that what nests in time
// nests in the file).
func (l *layout) complete(name, cat string, tid int, start, end time.Time, args map[string]any) {
	ts := l.us(start)
	dur := max(0, l.us(end)-ts)
	l.events = append(l.events, Event{Name: name, Cat: cat, Ph: "X", TS: ts, Dur: &dur, Pid: pid, Tid: tid, Args: args})
}

func (l *layout) thread(tid int, name string) {
	l.events = append(l.events,
		Event{Name: "thread_name", Ph: "M", Pid: pid, Tid: tid, Args: map[string]any{"name": name}},
		Event{Name: "thread_sort_index", Ph: "M", Pid: pid, Tid: tid, Args: map[string]any{"sort_index": tid}})
}

// occupancy is the time a task held its lane: its attempt, and the span its duration covers
// (which, for a hit that waited for another process, reaches past the attempt's end by its
// hashing, the part of its duration before the wait).
func occupancy(t profilerec.Task) runlanes.Span {
	start, end := t.Start, t.End
	if t.MeasuredFrom.Before(start) {
		start = t.MeasuredFrom
	}
	if e := t.MeasuredFrom.Add(t.Duration); e.After(end) {
		end = e
	}
	return runlanes.Span{ID: t.ID, Start: start, End: end}
}

func build(spans []profilerec.Span, tasks []profilerec.Task, meta Meta) Trace {
	l := &layout{t0: start(spans, tasks)}
	var ran []profilerec.Task
	var held []runlanes.Span
	for _, t := range tasks {
		if t.Start.IsZero() {
			l.complete(t.ID, CatTask, notRunTid, t.MeasuredFrom, t.MeasuredFrom, taskArgs(t))
			continue
		}
		ran = append(ran, t)
		held = append(held, occupancy(t))
	}
	lanes, nLanes := runlanes.Lanes(held)
	laneOf := make(map[string]int, len(ran))
	for i, t := range ran {
		laneOf[t.ID] = lanes[i]
		l.complete(t.ID, CatTask, laneTid+lanes[i], t.MeasuredFrom, t.MeasuredFrom.Add(t.Duration), taskArgs(t))
	}
	nBeside := l.phases(spans, laneOf)
	l.counters(ran, held)
	end := l.t0
	for _, s := range spans {
		end = latest(end, s.End)
	}
	for _, h := range held {
		end = latest(end, h.End)
	}
	name := "vx run " + meta.RunID
	l.complete(name, CatRun, vxTid, l.t0, end, map[string]any{"args": meta.Args})
	slices.SortStableFunc(l.events, eventOrder)
	l.events = append(metadata(name, nLanes, nBeside, len(ran) < len(tasks)), l.events...)
	return Trace{TraceEvents: l.events, DisplayTimeUnit: "ms", OtherData: map[string]any{
		"runId": meta.RunID, "args": meta.Args, "workers": meta.Workers, "memoryBudgetBytes": meta.MemoryBudget,
		"lanes": nLanes}}
}

// phases adds the spans of vx's own work: a task's on its lane, the run's on vx's track, the work
// beside the run on tracks of its own (the lowest free, as lanes are). It answers how many such
// tracks there are.
func (l *layout) phases(spans []profilerec.Span, laneOf map[string]int) int {
	var beside []profilerec.Span
	var besideSpans []runlanes.Span
	for _, s := range spans {
		if s.Background {
			beside = append(beside, s)
			besideSpans = append(besideSpans, runlanes.Span{ID: s.Name + "\x00" + s.Task, Start: s.Start, End: s.End})
			continue
		}
		tid := vxTid
		var args map[string]any
		if s.Task != "" {
			lane, ok := laneOf[s.Task]
			if !ok {
				continue // a task that never reported its timing (a panicked worker)
			}
			tid, args = laneTid+lane, map[string]any{"task": s.Task}
		}
		l.complete(s.Name, CatPhase, tid, s.Start, s.End, args)
	}
	tracks, n := runlanes.Lanes(besideSpans)
	for i, s := range beside {
		var args map[string]any
		if s.Task != "" {
			args = map[string]any{"task": s.Task}
		}
		l.complete(s.Name, CatPhase, besideTid+tracks[i], s.Start, s.End, args)
	}
	return n
}

// counters adds the running tasks and the memory they reserved, at each time either changes.
func (l *layout) counters(ran []profilerec.Task, held []runlanes.Span) {
	type change struct {
		at       time.Time
		tasks    int
		reserved int64
	}
	changes := make([]change, 0, 2*len(ran))
	for i, t := range ran {
		changes = append(changes, change{held[i].Start, 1, t.ReservedBytes}, change{held[i].End, -1, -t.ReservedBytes})
	}
	slices.SortStableFunc(changes, func(a, b change) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.tasks, b.tasks) // ends first
	})
	running, reserved := 0, int64(0)
	for i, c := range changes {
		running += c.tasks
		reserved += c.reserved
		if i+1 < len(changes) && l.us(changes[i+1].at) == l.us(c.at) {
			continue // one point per microsecond: its last value
		}
		ts := l.us(c.at)
		l.events = append(l.events,
			Event{Name: "running tasks", Ph: "C", TS: ts, Pid: pid, Tid: vxTid, Args: map[string]any{"tasks": running}},
			Event{Name: "reserved memory", Ph: "C", TS: ts, Pid: pid, Tid: vxTid, Args: map[string]any{"bytes": reserved}})
	}
}

func taskArgs(t profilerec.Task) map[string]any {
	args := map[string]any{"status": t.Status, "key": t.Key,
		"durationMs": float64(t.Duration.Microseconds()) / 1000, "reservedBytes": t.ReservedBytes}
	if t.CacheSource != "" {
		args["cacheSource"] = t.CacheSource
	} else {
		args["cacheSource"] = nil
	}
	return args
}

// metadata names the process and its tracks, in the order they are shown.
func metadata(name string, lanes, beside int, notRun bool) []Event {
	l := &layout{}
	l.events = append(l.events, Event{Name: "process_name", Ph: "M", Pid: pid, Args: map[string]any{"name": name}})
	l.thread(vxTid, "vx")
	if notRun {
		l.thread(notRunTid, "not run (blocked, skipped)")
	}
	for i := range beside {
		l.thread(besideTid+i, fmt.Sprintf("beside the run %d", i+1))
	}
	for i := range lanes {
		l.thread(laneTid+i, fmt.Sprintf("lane %d", i+1))
	}
	return l.events
}

// eventOrder sorts events by track, then time, a longer event (the parent) before a shorter one
// starting with it, a task before the phase of the same extent, counters after.
func eventOrder(a, b Event) int {
	if c := cmp.Compare(a.Tid, b.Tid); c != 0 {
		return c
	}
	if c := cmp.Compare(a.TS, b.TS); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Ph, b.Ph); c != 0 {
		return -c // X before C
	}
	if a.Dur != nil && b.Dur != nil && *a.Dur != *b.Dur {
		return cmp.Compare(*b.Dur, *a.Dur)
	}
	if c := cmp.Compare(catRank(a.Cat), catRank(b.Cat)); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}

func catRank(cat string) int {
	switch cat {
	case CatRun:
		return 0
	case CatTask:
		return 1
	}
	return 2
}

// start is the earliest time recorded.
func start(spans []profilerec.Span, tasks []profilerec.Task) time.Time {
	var t0 time.Time
	for _, s := range spans {
		t0 = earliest(t0, s.Start)
	}
	for _, t := range tasks {
		t0 = earliest(t0, t.Start)
		t0 = earliest(t0, t.MeasuredFrom)
	}
	return t0
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Check reports the first way tr breaks the shape Write gives a trace: a complete event that
// overlaps another of its track without holding it or lying inside it, a task inside a task, a
// phase of a task off that task's lane.
func (tr *Trace) Check() error {
	byTid := map[int][]Event{}
	laneOf := map[string]int{}
	for _, e := range tr.TraceEvents {
		if e.Ph != "X" {
			continue
		}
		if e.Dur == nil {
			return fmt.Errorf("complete event %q at %d has no dur", e.Name, e.TS)
		}
		byTid[e.Tid] = append(byTid[e.Tid], e)
		if e.Cat == CatTask {
			laneOf[e.Name] = e.Tid
		}
	}
	for tid, events := range byTid {
		slices.SortStableFunc(events, eventOrder)
		var open []Event
		for _, e := range events {
			for len(open) > 0 && open[len(open)-1].TS+*open[len(open)-1].Dur <= e.TS {
				open = open[:len(open)-1]
			}
			if len(open) > 0 {
				top := open[len(open)-1]
				if e.TS+*e.Dur > top.TS+*top.Dur {
					return fmt.Errorf("track %d: %s %q [%d, %d] overlaps %s %q [%d, %d]", tid, e.Cat, e.Name, e.TS, e.TS+*e.Dur,
						top.Cat, top.Name, top.TS, top.TS+*top.Dur)
				}
				if e.Cat == CatTask && top.Cat == CatTask {
					return fmt.Errorf("track %d: task %q lies inside task %q", tid, e.Name, top.Name)
				}
			}
			open = append(open, e)
		}
	}
	for tid, events := range byTid {
		for _, e := range events {
			task, _ := e.Args["task"].(string)
			if e.Cat == CatPhase && task != "" && tid >= laneTid && laneOf[task] != tid {
				return fmt.Errorf("phase %q of %s is on track %d, its task on %d", e.Name, task, tid, laneOf[task])
			}
		}
	}
	return nil
}
