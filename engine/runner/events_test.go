package runner

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/graph"
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
