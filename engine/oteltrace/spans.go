package oteltrace

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/vzn/vx/engine/profilerec"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
)

// The attributes of vx's spans.
const (
	AttrRunID        = "vx.run.id"
	AttrRunStatus    = "vx.run.status"
	AttrRunExitCode  = "vx.run.exit_code"
	AttrTaskID       = "vx.task.id"
	AttrCacheStatus  = "vx.cache.status"
	AttrCacheSource  = "vx.cache.source"
	AttrCacheKey     = "vx.cache.key"
	AttrExitCode     = "vx.exit_code"
	AttrPeakRSSBytes = "vx.peak_rss_bytes"
	AttrPhase        = "vx.phase"
)

// Phase names the phase a span of vx's own work under a task belongs to, from the name its code
// marked it with: the key (hash), the cache lookup (local or remote), the restore of a hit, the
// command's execution, the save of its outputs (archive, upload), and the wait for another
// process running the task. A name of no phase is kept as it is.
func Phase(marked string) string {
	switch marked {
	case "hash":
		return "key"
	case "cache lookup", "remote lookup":
		return "lookup"
	case "command":
		return "execute"
	case "archive", "upload":
		return "save"
	}
	return marked
}

// collector is a span processor that keeps the spans ended, for Export to send in batches of its
// own, under its one timeout.
type collector struct {
	mu    sync.Mutex
	spans []sdktrace.ReadOnlySpan
}

func (c *collector) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (c *collector) OnEnd(s sdktrace.ReadOnlySpan) {
	c.mu.Lock()
	c.spans = append(c.spans, s)
	c.mu.Unlock()
}
func (c *collector) Shutdown(context.Context) error   { return nil }
func (c *collector) ForceFlush(context.Context) error { return nil }

// Spans makes run's spans: the run's, each task's under it, each phase's under its task or the
// run. The run's sampler is the one OTEL_TRACES_SAMPLER names (every run by default).
func Spans(run Run, version string) ([]sdktrace.ReadOnlySpan, error) {
	c := &collector{}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(c), sdktrace.WithResource(newResource(version)))
	tracer := tp.Tracer("github.com/vzn/vx/engine/oteltrace", trace.WithInstrumentationVersion(version))
	b := builder{tracer: tracer, run: run}
	b.build()
	if err := tp.Shutdown(context.Background()); err != nil {
		return nil, err
	}
	return c.spans, nil
}

// builder lays out one run's spans.
type builder struct {
	tracer trace.Tracer
	run    Run
}

// build starts and ends every span. A span's parent is the context of one already started (ended
// or not): the SDK links them by ids, and the times are the recorded ones.
func (b *builder) build() {
	start, end := b.bounds()
	sum := b.run.Summary
	ctx, root := b.tracer.Start(context.Background(), "vx run", trace.WithTimestamp(start),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(runAttrs(sum)...))
	if !sum.OK {
		root.SetStatus(codes.Error, "run "+sum.Status)
	}
	timings := make(map[string]profilerec.Task, len(b.run.Tasks))
	for _, t := range b.run.Tasks {
		timings[t.ID] = t
	}
	taskCtx := make(map[string]context.Context, len(sum.Tasks))
	for i := range sum.Tasks {
		row := &sum.Tasks[i]
		from, to := taskBounds(timings[row.TaskID], start)
		tctx, span := b.tracer.Start(ctx, row.TaskID, trace.WithTimestamp(from), trace.WithAttributes(taskAttrs(row)...))
		if row.Status == store.StatusFailed || row.Status == store.StatusTimedOut {
			span.SetStatus(codes.Error, string(row.Status))
		}
		span.End(trace.WithTimestamp(to))
		taskCtx[row.TaskID] = tctx
	}
	spans := slices.Clone(b.run.Spans)
	slices.SortStableFunc(spans, func(a, b profilerec.Span) int { return a.Start.Compare(b.Start) })
	for _, s := range spans {
		parent, name := ctx, s.Name
		if tctx, ok := taskCtx[s.Task]; ok && s.Task != "" {
			parent, name = tctx, Phase(s.Name)
		}
		_, span := b.tracer.Start(parent, name, trace.WithTimestamp(s.Start), trace.WithAttributes(
			attribute.String(AttrPhase, s.Name), attribute.Bool("vx.background", s.Background)))
		span.End(trace.WithTimestamp(s.End))
	}
	root.End(trace.WithTimestamp(end))
}

// bounds answers the run's start (the summary's, or the first thing recorded, whichever is
// earlier) and end (the last thing recorded).
func (b *builder) bounds() (start, end time.Time) {
	start = b.run.Summary.StartedAt
	extend := func(t time.Time) {
		if t.IsZero() {
			return
		}
		if start.IsZero() || t.Before(start) {
			start = t
		}
		if t.After(end) {
			end = t
		}
	}
	for _, s := range b.run.Spans {
		extend(s.Start)
		extend(s.End)
	}
	for _, t := range b.run.Tasks {
		from, to := taskBounds(t, time.Time{})
		extend(from)
		extend(to)
	}
	if end.Before(start) {
		end = start
	}
	return start, end
}

// taskBounds is the time a task's span covers: its attempt on its worker, and the span its
// duration covers (which, for a hit that waited for another process, reaches past the attempt);
// for a task that never started, an instant at its MeasuredFrom, else at runStart.
func taskBounds(t profilerec.Task, runStart time.Time) (from, to time.Time) {
	if t.Start.IsZero() {
		at := t.MeasuredFrom
		if at.IsZero() {
			at = runStart
		}
		return at, at
	}
	from, to = t.Start, t.End
	if !t.MeasuredFrom.IsZero() && t.MeasuredFrom.Before(from) {
		from = t.MeasuredFrom
	}
	if e := t.MeasuredFrom.Add(t.Duration); !t.MeasuredFrom.IsZero() && e.After(to) {
		to = e
	}
	return from, to
}

// runAttrs are the run span's attributes: its id, status, exit code, totals and tags.
func runAttrs(sum *summary.Summary) []attribute.KeyValue {
	t := sum.Totals
	attrs := []attribute.KeyValue{
		attribute.String(AttrRunID, sum.RunID),
		attribute.String(AttrRunStatus, sum.Status),
		attribute.Int(AttrRunExitCode, sum.ExitCode),
		attribute.Int("vx.run.tasks", t.Tasks),
		attribute.Int("vx.run.hits", t.Hits),
		attribute.Int("vx.run.misses", t.Misses),
		attribute.Int("vx.run.failed", t.Failed),
		attribute.Int64("vx.run.saved_ms", t.SavedMs),
		attribute.Bool("vx.run.timed_out", sum.TimedOut),
	}
	for _, k := range sortedKeys(sum.Tags) {
		attrs = append(attrs, attribute.String("vx.tag."+k, sum.Tags[k]))
	}
	return attrs
}

// taskAttrs are a task span's attributes, from its row in the summary.
func taskAttrs(row *summary.TaskResult) []attribute.KeyValue {
	project, task, _ := strings.Cut(row.TaskID, "#")
	attrs := []attribute.KeyValue{
		attribute.String(AttrTaskID, row.TaskID),
		attribute.String("vx.project", project),
		attribute.String("vx.task", task),
		attribute.String(AttrCacheStatus, string(row.Status)),
		attribute.String(AttrCacheKey, row.Hash),
		attribute.Int64("vx.duration_ms", row.DurationMs),
		attribute.Int64("vx.saved_ms", row.SavedMs),
		attribute.Int64("vx.reserved_bytes", row.ReservedBytes),
	}
	if row.CacheSource != nil {
		attrs = append(attrs, attribute.String(AttrCacheSource, *row.CacheSource))
	}
	if row.PeakRssBytes > 0 { // 0: not measured (a hit, or a task lighter than its supervisor)
		attrs = append(attrs, attribute.Int64(AttrPeakRSSBytes, row.PeakRssBytes))
	}
	if row.ExitCode != nil {
		attrs = append(attrs, attribute.Int(AttrExitCode, *row.ExitCode))
	}
	if row.BlockedBy != nil {
		attrs = append(attrs, attribute.String("vx.blocked_by", *row.BlockedBy))
	}
	if row.Attempts > 1 {
		attrs = append(attrs, attribute.Int("vx.attempts", row.Attempts), attribute.Bool("vx.flaky", row.Flaky))
	}
	return attrs
}

// sortedKeys answers m's keys in order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
