// Package profilerec lets vx's own work be timed for a run profile (`vx run --profile=FILE`) without a
// parameter through every layer: a Recorder rides in the context, the code that does a phase of
// work (a config load, a git listing, a task's hashing, cache lookup, restore, command, archive,
// upload) marks it with Start and End, and the runner reports each task's timing with Task. With
// no Recorder in the context every call is a context lookup and nothing else.
package profilerec

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Recorder receives what a run's code marks. Its methods are called from many goroutines at once.
type Recorder interface {
	// Now is the recorder's clock: spans are timed by it.
	Now() time.Time
	// Span receives one ended span.
	Span(s Span)
	// Task receives one task's timing, once, when the task ended.
	Task(t Task)
}

// Span is one phase of vx's own work.
type Span struct {
	// Name says what the phase was: "config load", "hash", "cache lookup", …
	Name string
	// Task is the id of the task whose worker did it; "" for the run's own work.
	Task string
	// Background says that the work ran beside its caller (a git listing taken while the index
	// is read, an upload after the task ended), on a goroutine of its own.
	Background bool
	Start, End time.Time
}

// Task is one task's timing in a run: the attempt on its worker, and where the duration its
// summary row says was measured.
type Task struct {
	ID          string
	Status      string
	CacheSource string
	Key         string
	// Start and End bound the attempt on its worker (zero for a task that never started:
	// blocked, or skipped before it did).
	Start, End time.Time
	// MeasuredFrom is where Duration begins: the command's start for a task that ran one, the
	// attempt's start (or the end of its wait for another process) for a hit. Duration is the
	// summary row's duration, exactly.
	MeasuredFrom time.Time
	Duration     time.Duration
	// ReservedBytes is the memory the task reserved from the run's budget while it ran.
	ReservedBytes int64
}

type recorderKey struct{}
type taskKey struct{}

// WithRecorder returns ctx carrying rec.
func WithRecorder(ctx context.Context, rec Recorder) context.Context {
	return context.WithValue(ctx, recorderKey{}, rec)
}

// WithTask returns ctx naming taskID as the task its spans belong to.
func WithTask(ctx context.Context, taskID string) context.Context {
	if recorderOf(ctx) == nil {
		return ctx
	}
	return context.WithValue(ctx, taskKey{}, taskID)
}

func recorderOf(ctx context.Context) Recorder {
	rec, _ := ctx.Value(recorderKey{}).(Recorder)
	return rec
}

// Region is a span begun and not yet ended; the zero Region (no recorder) does nothing.
type Region struct {
	rec Recorder
	s   Span
}

// Start begins the span name of ctx's task (or of the run's own work).
func Start(ctx context.Context, name string) Region {
	rec := recorderOf(ctx)
	if rec == nil {
		return Region{}
	}
	task, _ := ctx.Value(taskKey{}).(string)
	return Region{rec: rec, s: Span{Name: name, Task: task, Start: rec.Now()}}
}

// StartBackground begins a span of work that runs beside its caller, on a goroutine of its own.
func StartBackground(ctx context.Context, name string) Region {
	r := Start(ctx, name)
	r.s.Background = true
	return r
}

// End ends the span and hands it to the recorder.
func (r Region) End() {
	if r.rec == nil {
		return
	}
	r.s.End = r.rec.Now()
	r.rec.Span(r.s)
}

// Record hands a span already timed by the caller (from timestamps it took anyway) to ctx's
// recorder, as ctx's task's.
func Record(ctx context.Context, name string, start, end time.Time) {
	rec := recorderOf(ctx)
	if rec == nil {
		return
	}
	task, _ := ctx.Value(taskKey{}).(string)
	rec.Span(Span{Name: name, Task: task, Start: start, End: end})
}

// RecordTask hands a task's timing to ctx's recorder.
func RecordTask(ctx context.Context, t Task) {
	if rec := recorderOf(ctx); rec != nil {
		rec.Task(t)
	}
}

// Enabled reports whether ctx carries a recorder.
func Enabled(ctx context.Context) bool { return recorderOf(ctx) != nil }

// Collector is a Recorder that keeps everything it receives, for a consumer that lays the run out
// once it ended (the OpenTelemetry export). It is safe for concurrent use.
type Collector struct {
	now   func() time.Time
	mu    sync.Mutex
	spans []Span
	tasks []Task
}

// NewCollector returns a Collector timing spans by now (nil: time.Now).
func NewCollector(now func() time.Time) *Collector {
	if now == nil {
		now = time.Now
	}
	return &Collector{now: now}
}

// Now is the collector's clock.
func (c *Collector) Now() time.Time { return c.now() }

// Span keeps one ended span.
func (c *Collector) Span(s Span) {
	c.mu.Lock()
	c.spans = append(c.spans, s)
	c.mu.Unlock()
}

// Task keeps one task's timing.
func (c *Collector) Task(t Task) {
	c.mu.Lock()
	c.tasks = append(c.tasks, t)
	c.mu.Unlock()
}

// Recorded answers copies of the spans and the task timings kept so far, in the order received.
func (c *Collector) Recorded() ([]Span, []Task) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.spans), slices.Clone(c.tasks)
}

// Tee answers a Recorder that hands every span and task timing to each of recs (nil ones left
// out), timed by the first one's clock: a run profiled and traced at once marks its phases once.
// With one recorder it answers that one; with none, nil.
func Tee(recs ...Recorder) Recorder {
	var kept tee
	for _, r := range recs {
		if r != nil {
			kept = append(kept, r)
		}
	}
	switch len(kept) {
	case 0:
		return nil
	case 1:
		return kept[0]
	}
	return kept
}

type tee []Recorder

func (t tee) Now() time.Time { return t[0].Now() }

func (t tee) Span(s Span) {
	for _, r := range t {
		r.Span(s)
	}
}

func (t tee) Task(task Task) {
	for _, r := range t {
		r.Task(task)
	}
}
