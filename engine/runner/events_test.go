package runner

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/store"
)

func TestEvents(t *testing.T) {
	f := newFixture(t)
	p := f.project("p")
	f.task(p, "a", "true", nil)
	f.task(p, "b", "exit 1", func(t *graph.Task) { t.DependsOn = []string{"p#a"} })
	f.task(p, "c", "true", func(t *graph.Task) { t.DependsOn = []string{"p#b"} })
	var events bytes.Buffer
	s, _ := f.run([]string{"p#a", "p#b", "p#c"}, func(o *Options) { o.Events = &events })
	lines := strings.Split(strings.TrimSpace(events.String()), "\n")
	if len(lines) != 5 {
		t.Fatalf("events:\n%s", events.String())
	}
	var first, last map[string]any
	json.Unmarshal([]byte(lines[0]), &first)
	json.Unmarshal([]byte(lines[4]), &last)
	if first["type"] != "start" || first["runId"] != s.RunID || first["total"] != 3.0 || last["type"] != "end" || last["ok"] != false {
		t.Fatalf("start/end: %v %v", first, last)
	}
	if last["commands"] != 2.0 {
		t.Errorf("the end event says %v commands started, want 2 (a and b; c was blocked)", last["commands"])
	}
	// Run again, a hits: only b's command starts; a run of a alone starts none.
	for _, tc := range []struct {
		ids  []string
		want float64
	}{{[]string{"p#a", "p#b", "p#c"}, 1}, {[]string{"p#a"}, 0}} {
		events.Reset()
		f.run(tc.ids, func(o *Options) { o.Events = &events })
		lines := strings.Split(strings.TrimSpace(events.String()), "\n")
		json.Unmarshal([]byte(lines[len(lines)-1]), &last)
		if last["commands"] != tc.want {
			t.Errorf("a run of %v: the end event says %v commands started, want %v", tc.ids, last["commands"], tc.want)
		}
	}
	var blocked map[string]any
	json.Unmarshal([]byte(lines[3]), &blocked)
	if blocked["taskId"] != "p#c" || blocked["status"] != "blocked" || blocked["done"] != 3.0 || blocked["blockedBy"] != "p#b" {
		t.Fatalf("blocked event: %v", blocked)
	}
}

// The events are the lines they were when they were maps: the same keys, in the same order.
func TestEventWire(t *testing.T) {
	code := 1
	for _, tc := range []struct {
		ev  Event
		old map[string]any
	}{
		{startEvent("r1", 3), map[string]any{"type": "start", "runId": "r1", "total": 3}},
		{taskEvent(store.Execution{TaskID: "p#b", Status: "failed", Duration: 1500 * time.Millisecond, Hash: "abc", ExitCode: &code}, 2, 3),
			map[string]any{"type": "task", "taskId": "p#b", "status": "failed", "done": 2, "total": 3, "durationMs": 1500, "hash": "abc", "exitCode": 1}},
		{taskEvent(store.Execution{TaskID: "p#c", Status: "blocked", BlockedBy: "p#b"}, 3, 3),
			map[string]any{"type": "task", "taskId": "p#c", "status": "blocked", "done": 3, "total": 3, "durationMs": 0, "hash": "", "blockedBy": "p#b"}},
		{endEvent("r1", false, 1, 2), map[string]any{"type": "end", "runId": "r1", "ok": false, "exitCode": 1, "commands": 2}},
		{endEvent("r1", true, 0, 0), map[string]any{"type": "end", "runId": "r1", "ok": true, "exitCode": 0, "commands": 0}},
	} {
		var got bytes.Buffer
		WriteEvent(&got, tc.ev)
		want, _ := json.Marshal(tc.old)
		if got.String() != string(want)+"\n" {
			t.Errorf("event %s:\n got %s want %s", tc.ev.Type, got.String(), want)
		}
	}
}

// ReadEvents reads what WriteEvent wrote, skips what is not an event, and reads to the end.
func TestReadEvents(t *testing.T) {
	var stream bytes.Buffer
	WriteEvent(&stream, startEvent("r1", 2))
	stream.WriteString("not an event\n")
	WriteEvent(&stream, ErrorEvent(`no task matches "x" --all`))
	var got []Event
	ReadEvents(&stream, func(ev Event) { got = append(got, ev) })
	if len(got) != 2 || got[0].Type != EventStart || got[0].RunID != "r1" || got[0].Total != 2 ||
		got[1].Type != EventError || got[1].Message != `no task matches "x" --all` {
		t.Fatalf("events: %+v", got)
	}

	// A line past the bound ends the reading, not the writer: the rest is drained.
	stream.Reset()
	stream.WriteString(strings.Repeat("x", maxEventLine+1) + "\n")
	WriteEvent(&stream, startEvent("r2", 1))
	ReadEvents(&stream, func(Event) {})
	if stream.Len() != 0 {
		t.Fatalf("%d bytes left unread", stream.Len())
	}
}

// A reader of everything but task lines skips exactly those WriteEvent writes for tasks.
func TestReadEventsButTasks(t *testing.T) {
	var stream bytes.Buffer
	WriteEvent(&stream, startEvent("r1", 2))
	for i, id := range []string{"a#build", "b#build"} {
		WriteEvent(&stream, taskEvent(store.Execution{TaskID: id, Status: store.StatusHit}, i+1, 2))
	}
	WriteEvent(&stream, ErrorEvent("boom"))
	WriteEvent(&stream, endEvent("r1", false, 1, 1))
	var got []string
	ReadEventsButTasks(&stream, func(ev Event) { got = append(got, ev.Type) })
	if want := []string{EventStart, EventError, EventEnd}; !slices.Equal(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
}
