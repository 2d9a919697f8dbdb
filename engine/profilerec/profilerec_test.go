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
