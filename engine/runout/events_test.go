package runout

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/store"
)

// The events are the lines they were when they were maps: the same keys, in the same order.
func TestEventWire(t *testing.T) {
	code := 1
	for _, tc := range []struct {
		ev  Event
		old map[string]any
	}{
		{StartEvent("r1", 3), map[string]any{"type": "start", "runId": "r1", "total": 3}},
		{TaskEvent(store.Execution{TaskID: "p#b", Status: "failed", Duration: 1500 * time.Millisecond, Hash: "abc", ExitCode: &code}, 2, 3),
			map[string]any{"type": "task", "taskId": "p#b", "status": "failed", "done": 2, "total": 3, "durationMs": 1500, "hash": "abc", "exitCode": 1}},
		{TaskEvent(store.Execution{TaskID: "p#c", Status: "blocked", BlockedBy: "p#b"}, 3, 3),
			map[string]any{"type": "task", "taskId": "p#c", "status": "blocked", "done": 3, "total": 3, "durationMs": 0, "hash": "", "blockedBy": "p#b"}},
		{EndEvent("r1", false, 1, 2), map[string]any{"type": "end", "runId": "r1", "ok": false, "exitCode": 1, "commands": 2}},
		{EndEvent("r1", true, 0, 0), map[string]any{"type": "end", "runId": "r1", "ok": true, "exitCode": 0, "commands": 0}},
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
	WriteEvent(&stream, StartEvent("r1", 2))
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
	WriteEvent(&stream, StartEvent("r2", 1))
	ReadEvents(&stream, func(Event) {})
	if stream.Len() != 0 {
		t.Fatalf("%d bytes left unread", stream.Len())
	}
}

// A reader of everything but task lines skips exactly those WriteEvent writes for tasks.
func TestReadEventsButTasks(t *testing.T) {
	var stream bytes.Buffer
	WriteEvent(&stream, StartEvent("r1", 2))
	for i, id := range []string{"a#build", "b#build"} {
		WriteEvent(&stream, TaskEvent(store.Execution{TaskID: id, Status: store.StatusHit}, i+1, 2))
	}
	WriteEvent(&stream, ErrorEvent("boom"))
	WriteEvent(&stream, EndEvent("r1", false, 1, 1))
	var got []string
	ReadEventsButTasks(&stream, func(ev Event) { got = append(got, ev.Type) })
	if want := []string{EventStart, EventError, EventEnd}; !slices.Equal(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
}
