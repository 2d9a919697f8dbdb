package report

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/failloc"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
	"github.com/vzn/vx/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite the golden reports in testdata")

func intp(i int) *int { return &i }

// failedRun is a run of five tasks: one failed with places in its output, one timed out with
// markup in its output, one blocked, one hit, one that passed on its second attempt.
func failedRun() Run {
	sum := &summary.Summary{RunID: "01m97kpy8jkr62mp0e400v07be", Status: store.RunFailed, ExitCode: 1,
		StartedAt: time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC), Tags: map[string]string{"branch": "main", "job": "test | 1/2"},
		Tasks: []summary.TaskResult{
			{TaskID: "web#build", Status: store.StatusHit, DurationMs: 12, SavedMs: 4200},
			{TaskID: "lib#test", Status: store.StatusFailed, DurationMs: 1500, ExitCode: intp(2)},
			{TaskID: "api#e2e", Status: store.StatusTimedOut, DurationMs: 60000, TimedOut: true},
			{TaskID: "app#test", Status: store.StatusBlocked},
			{TaskID: "ui#test", Status: store.StatusMiss, DurationMs: 800, Attempts: 2, Flaky: true},
		},
		Totals: summary.Totals{Tasks: 5, Hits: 1, Misses: 1, Failed: 2, Blocked: 1, WallMs: 61234, SavedMs: 4200}}
	var long strings.Builder
	for i := 1; i <= 40; i++ {
		long.WriteString("step " + strings.Repeat("*", i%3) + " # not a heading\n")
	}
	return Run{Summary: sum, Failures: []Failure{
		{TaskID: "lib#test", Status: store.StatusFailed, ExitCode: intp(2),
			Plain:     "FAIL src/sum.test.ts > adds\nAssertionError: expected 3 to be 4 ``` <b>bold</b>\n```\n## not a heading\n ❯ src/sum.test.ts:6:17\n",
			Locations: []Location{{File: "packages/lib/src/sum.test.ts", Line: 6, Col: 17, Message: "❯ src/sum.test.ts:6:17"}}},
		{TaskID: "api#e2e", Status: store.StatusTimedOut, Plain: long.String()},
	}}
}

// The Markdown report of a failed run and of a run that passed, against the golden files.
func TestMarkdownGolden(t *testing.T) {
	passed := &summary.Summary{RunID: "01m97kq14tww5zyeg0x99e1rmt", OK: true, Status: store.RunOK,
		Tasks:  []summary.TaskResult{{TaskID: "lib#build", Status: store.StatusHit, DurationMs: 3, SavedMs: 900}, {TaskID: "app#build", Status: store.StatusMiss, DurationMs: 2100}},
		Totals: summary.Totals{Tasks: 2, Hits: 1, Misses: 1, WallMs: 2150, SavedMs: 900}}
	nothing := &summary.Summary{OK: true, Status: store.RunOK, NoTasks: "nothing affected since main", Tasks: []summary.TaskResult{}}
	for name, run := range map[string]Run{"failed.md": failedRun(), "passed.md": {Summary: passed}, "nothing.md": {Summary: nothing}} {
		var got bytes.Buffer
		if err := Markdown(&got, run); err != nil {
			t.Fatal(err)
		}
		golden(t, name, got.Bytes())
	}
}

// The annotations of a run's failures, against the golden file, and their bounds: at most 10 a
// task and 50 a run.
func TestAnnotations(t *testing.T) {
	var got bytes.Buffer
	if _, err := Annotations(&got, failedRun().Failures); err != nil {
		t.Fatal(err)
	}
	golden(t, "annotations.txt", got.Bytes())

	var many []Failure
	for i := range 8 {
		f := Failure{TaskID: "p" + string(rune('a'+i)) + "#test", Status: store.StatusFailed, ExitCode: intp(1)}
		for line := 1; line <= 12; line++ {
			f.Locations = append(f.Locations, Location{File: "src/a.ts", Line: line, Col: 1, Message: "bad"})
		}
		many = append(many, f)
	}
	got.Reset()
	n, err := Annotations(&got, many)
	if err != nil || n != MaxAnnotationsPerRun || strings.Count(got.String(), "::error ") != MaxAnnotationsPerRun {
		t.Errorf("wrote %d annotations (%v), want %d", n, err, MaxAnnotationsPerRun)
	}
	if c := strings.Count(got.String(), "title=pa#test"); c != MaxAnnotationsPerTask {
		t.Errorf("%d annotations of one task, want %d", c, MaxAnnotationsPerTask)
	}
}

// Failures' places are made relative to the repository root, which may hold the workspace.
func TestRelativeLocations(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "ws", "packages", "lib", "a.ts")
	got := relativeLocations([]failloc.Finding{{Location: failloc.Location{File: file, Line: 3}, Message: "x"}, {Location: failloc.Location{File: "/elsewhere/b.ts", Line: 1}}}, root)
	if got[0].File != "ws/packages/lib/a.ts" || got[1].File != "/elsewhere/b.ts" {
		t.Errorf("got %+v", got)
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it); got:\n%s", path, got)
	}
}

// Failures answers a run's failures from the index with the places each names, the one that
// ended first first, whatever their order in the graph.
func TestFailuresFirstToEndFirst(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	ws := testkit.BuildWorkspace("lib", "app")
	ws.Root, ws.CacheDir = root, filepath.Join(root, ".vx")
	for _, p := range ws.Projects {
		p.AbsDir = filepath.Join(root, p.Dir)
	}
	testkit.WriteTree(t, root, map[string]string{"packages/lib/src/a.ts": "x\n", "packages/app/main.go": "package main\n"})
	st, err := store.Open(ctx, ws.CacheDir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.UnixMilli(1_780_000_000_000)
	run := store.Run{ID: store.NewRunID(start), Started: start, PID: os.Getpid()}
	if err := st.BeginRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	var execs []store.Execution
	for i, e := range []struct {
		id, log string
		took    time.Duration
	}{{"app#test", "main.go:3:1: undefined: x\n", 5 * time.Second}, {"lib#test", "src/a.ts(1,2): error TS1\n", time.Second}} {
		blob, err := st.CAS().Put([]byte(e.log))
		if err != nil {
			t.Fatal(err)
		}
		project, _, _ := strings.Cut(e.id, "#")
		execs = append(execs, store.Execution{RunID: run.ID, TaskID: e.id, Project: project, Task: "test", Ord: i, Status: store.StatusFailed,
			ExitCode: intp(1), Started: start, Duration: e.took, LogBlob: blob, LogSource: "failure"})
	}
	if err := st.Record(ctx, store.Batch{Executions: execs}); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(ctx, run.ID, store.RunFailed, 1, start.Add(6*time.Second)); err != nil {
		t.Fatal(err)
	}
	sum := &summary.Summary{RunID: run.ID, Totals: summary.Totals{Failed: 2}}
	got, err := Failures(ctx, st, ws, root, sum, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].TaskID != "lib#test" || got[1].TaskID != "app#test" {
		t.Fatalf("failures %+v, want lib#test (ended first) then app#test", got)
	}
	want := []Location{{File: "packages/lib/src/a.ts", Line: 1, Col: 2, Message: "src/a.ts(1,2): error TS1"}}
	if !reflect.DeepEqual(got[0].Locations, want) {
		t.Errorf("lib#test's places: %+v, want %+v", got[0].Locations, want)
	}
}
