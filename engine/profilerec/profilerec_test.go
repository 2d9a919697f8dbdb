package profilerec_test

import (
	"context"
	"testing"
	"time"

	"github.com/vzn/vx/engine/profilerec"
)

type recorder struct {
	spans []profilerec.Span
	tasks []profilerec.Task
}

func (r *recorder) Now() time.Time         { return time.Unix(int64(len(r.spans)), 0) }
func (r *recorder) Span(s profilerec.Span) { r.spans = append(r.spans, s) }
func (r *recorder) Task(t profilerec.Task) { r.tasks = append(r.tasks, t) }

func TestSpansGoToTheContextsRecorderAsItsTasks(t *testing.T) {
	ctx := context.Background()
	// Without a recorder nothing is kept, and nothing fails.
	profilerec.Start(ctx, "hash").End()
	profilerec.Record(ctx, "command", time.Now(), time.Now())
	profilerec.RecordTask(ctx, profilerec.Task{ID: "a#b"})
	if profilerec.Enabled(ctx) || profilerec.WithTask(ctx, "a#b") != ctx {
		t.Error("a context without a recorder is enabled, or WithTask wrapped it")
	}

	rec := &recorder{}
	ctx = profilerec.WithRecorder(ctx, rec)
	profilerec.Start(ctx, "config load").End()
	task := profilerec.WithTask(ctx, "app#build")
	profilerec.StartBackground(task, "upload").End()
	profilerec.Record(task, "command", time.Unix(5, 0), time.Unix(7, 0))
	profilerec.RecordTask(ctx, profilerec.Task{ID: "app#build", Duration: time.Second})
	want := []profilerec.Span{
		{Name: "config load", Start: time.Unix(0, 0), End: time.Unix(0, 0)},
		{Name: "upload", Task: "app#build", Background: true, Start: time.Unix(1, 0), End: time.Unix(1, 0)},
		{Name: "command", Task: "app#build", Start: time.Unix(5, 0), End: time.Unix(7, 0)},
	}
	if len(rec.spans) != len(want) {
		t.Fatalf("spans %+v, want %+v", rec.spans, want)
	}
	for i := range want {
		if rec.spans[i] != want[i] {
			t.Errorf("span %d: %+v, want %+v", i, rec.spans[i], want[i])
		}
	}
	if len(rec.tasks) != 1 || rec.tasks[0].ID != "app#build" {
		t.Errorf("tasks %+v", rec.tasks)
	}
}

// A Tee hands each span and task to every recorder, timed by the first one's clock; a Collector
// answers what it kept.
func TestTeeAndCollector(t *testing.T) {
	first := &recorder{}
	col := profilerec.NewCollector(func() time.Time { return time.Unix(99, 0) })
	if profilerec.Tee(nil, col) != profilerec.Recorder(col) || profilerec.Tee() != nil {
		t.Error("a tee of one recorder is not that recorder, or of none not nil")
	}
	ctx := profilerec.WithTask(profilerec.WithRecorder(context.Background(), profilerec.Tee(first, col)), "a#b")
	profilerec.Start(ctx, "hash").End()
	profilerec.RecordTask(ctx, profilerec.Task{ID: "a#b"})
	spans, tasks := col.Recorded()
	if len(spans) != 1 || len(first.spans) != 1 || spans[0] != first.spans[0] || spans[0].Task != "a#b" ||
		!spans[0].Start.Equal(time.Unix(0, 0)) || len(tasks) != 1 || len(first.tasks) != 1 {
		t.Errorf("collector %v %v, first %v %v", spans, tasks, first.spans, first.tasks)
	}
}
