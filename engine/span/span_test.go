package span_test

import (
	"context"
	"testing"
	"time"

	"github.com/vzn/vx/engine/span"
)

type recorder struct {
	spans []span.Span
	tasks []span.Task
}

func (r *recorder) Now() time.Time   { return time.Unix(int64(len(r.spans)), 0) }
func (r *recorder) Span(s span.Span) { r.spans = append(r.spans, s) }
func (r *recorder) Task(t span.Task) { r.tasks = append(r.tasks, t) }

func TestSpansGoToTheContextsRecorderAsItsTasks(t *testing.T) {
	ctx := context.Background()
	// Without a recorder nothing is kept, and nothing fails.
	span.Start(ctx, "hash").End()
	span.Record(ctx, "command", time.Now(), time.Now())
	span.RecordTask(ctx, span.Task{ID: "a#b"})
	if span.Enabled(ctx) || span.WithTask(ctx, "a#b") != ctx {
		t.Error("a context without a recorder is enabled, or WithTask wrapped it")
	}

	rec := &recorder{}
	ctx = span.WithRecorder(ctx, rec)
	span.Start(ctx, "config load").End()
	task := span.WithTask(ctx, "app#build")
	span.StartBackground(task, "upload").End()
	span.Record(task, "command", time.Unix(5, 0), time.Unix(7, 0))
	span.RecordTask(ctx, span.Task{ID: "app#build", Duration: time.Second})
	want := []span.Span{
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
