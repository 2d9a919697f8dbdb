package chrometrace_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/chrometrace"
	"github.com/vzn/vx/engine/profilerec"
)

func at(us int) time.Time { return time.Unix(100, 0).Add(time.Duration(us) * time.Microsecond) }

// record marks, through the span package as the run does, a run of three tasks: a miss with its
// phases and an upload beside it, a hit that waited for another process (its duration leaves the
// wait out), and a task blocked by a failure; then the trace is written and read back.
func record(t *testing.T) chrometrace.Trace {
	t.Helper()
	now := at(0)
	rec := chrometrace.New(func() time.Time { return now })
	ctx := profilerec.WithRecorder(t.Context(), rec)
	step := func(us int) { now = at(us) }
	load := profilerec.Start(ctx, "config load")
	step(500)
	load.End()
	git := profilerec.StartBackground(ctx, "git listing")
	step(900)
	git.End()

	lib := profilerec.WithTask(ctx, "lib#build")
	h := profilerec.Start(lib, "hash")
	step(1000)
	h.End()
	profilerec.Record(lib, "cache lookup", at(1000), at(1100))
	profilerec.Record(lib, "command", at(1200), at(5200))
	profilerec.Record(lib, "archive", at(5300), at(5600))
	up := profilerec.StartBackground(lib, "upload")
	step(9000)
	up.End()
	profilerec.RecordTask(ctx, profilerec.Task{ID: "lib#build", Status: "miss", Key: "k1", Start: at(900), End: at(5700),
		MeasuredFrom: at(1200), Duration: 4000 * time.Microsecond, ReservedBytes: 100})

	// app#build waits 2,000 µs for another process after 100 µs of hashing, then restores in 300:
	// its duration is 400 µs, and it ends (in the trace) 100 µs after its attempt did.
	app := profilerec.WithTask(ctx, "app#build")
	profilerec.Record(app, "hash", at(5700), at(5800))
	profilerec.Record(app, "lock wait", at(5800), at(7800))
	profilerec.Record(app, "cache lookup", at(7800), at(7900))
	profilerec.Record(app, "restore", at(7900), at(8100))
	profilerec.RecordTask(ctx, profilerec.Task{ID: "app#build", Status: "hit", CacheSource: "local", Key: "k2", Start: at(5700), End: at(8100),
		MeasuredFrom: at(7800), Duration: 400 * time.Microsecond, ReservedBytes: 50})
	// web#build starts on a second lane while lib#build runs.
	profilerec.RecordTask(ctx, profilerec.Task{ID: "web#build", Status: "failed", Key: "k3", Start: at(1000), End: at(2000),
		MeasuredFrom: at(1000), Duration: 1000 * time.Microsecond, ReservedBytes: 70})
	profilerec.RecordTask(ctx, profilerec.Task{ID: "web#test", Status: "blocked", MeasuredFrom: at(2000)})

	var buf bytes.Buffer
	if err := rec.Write(&buf, chrometrace.Meta{RunID: "r1", Args: []string{"run", "build"}, Workers: 2, MemoryBudget: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	var tr chrometrace.Trace
	if err := json.Unmarshal(buf.Bytes(), &tr); err != nil {
		t.Fatalf("the trace is not JSON: %v\n%s", err, buf.String())
	}
	return tr
}

func TestTraceLanesTasksAndPhases(t *testing.T) {
	tr := record(t)
	if err := tr.Check(); err != nil {
		t.Fatal(err)
	}
	tasks := map[string]chrometrace.Event{}
	threads := map[int]string{}
	var phases []string
	for _, e := range tr.TraceEvents {
		switch {
		case e.Ph == "M" && e.Name == "thread_name":
			threads[e.Tid] = e.Args["name"].(string)
		case e.Ph == "X" && e.Cat == chrometrace.CatTask:
			if _, dup := tasks[e.Name]; dup {
				t.Errorf("two task events for %s", e.Name)
			}
			tasks[e.Name] = e
		case e.Ph == "X" && e.Cat == chrometrace.CatPhase:
			phases = append(phases, threads[e.Tid]+": "+e.Name)
		}
	}
	for id, want := range map[string]struct {
		lane     string
		ts, dur  int64
		status   string
		cacheSrc any
	}{
		"lib#build": {"lane 1", 1200, 4000, "miss", nil},
		"web#build": {"lane 2", 1000, 1000, "failed", nil},
		"app#build": {"lane 1", 7800, 400, "hit", "local"},
		"web#test":  {"not run (blocked, skipped)", 2000, 0, "blocked", nil},
	} {
		e, ok := tasks[id]
		switch {
		case !ok:
			t.Errorf("no task event for %s", id)
		case threads[e.Tid] != want.lane || e.TS != want.ts || *e.Dur != want.dur || e.Args["status"] != want.status ||
			e.Args["cacheSource"] != want.cacheSrc:
			t.Errorf("%s: %s ts %d dur %d args %v; want %s ts %d dur %d status %s source %v", id, threads[e.Tid], e.TS, *e.Dur, e.Args,
				want.lane, want.ts, want.dur, want.status, want.cacheSrc)
		}
	}
	joined := strings.Join(phases, "\n")
	for _, want := range []string{"vx: config load", "beside the run 1: git listing", "beside the run 1: upload",
		"lane 1: hash", "lane 1: command", "lane 1: lock wait", "lane 1: restore"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no phase %q among:\n%s", want, joined)
		}
	}
	var running, reserved []float64
	for _, e := range tr.TraceEvents {
		if e.Ph == "C" && e.Name == "running tasks" {
			running = append(running, e.Args["tasks"].(float64))
		}
		if e.Ph == "C" && e.Name == "reserved memory" {
			reserved = append(reserved, e.Args["bytes"].(float64))
		}
	}
	// lib starts (1), web starts (2), web ends (1), lib ends as app starts (1), app ends (0).
	if want := []float64{1, 2, 1, 1, 0}; !equal(running, want) {
		t.Errorf("running tasks %v, want %v", running, want)
	}
	if want := []float64{100, 170, 100, 50, 0}; !equal(reserved, want) {
		t.Errorf("reserved memory %v, want %v", reserved, want)
	}
}

// Check finds a phase that overlaps its task's event without lying inside it.
func TestCheckFindsABrokenNesting(t *testing.T) {
	tr := record(t)
	for i, e := range tr.TraceEvents {
		if e.Name == "restore" {
			end := *e.Dur + 10_000
			tr.TraceEvents[i].Dur = &end
		}
	}
	if err := tr.Check(); err == nil || !strings.Contains(err.Error(), `"restore"`) {
		t.Errorf("Check: %v, want the restore named", err)
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
