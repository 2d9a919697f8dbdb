package summary

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/store"
)

// A run's rows become one summary: each task's row as the index kept it, the totals by status
// (a timeout counted as failed), the time hits saved, the remote hits, and the run's outcome.
func TestSummarize(t *testing.T) {
	start := time.Date(2026, 12, 7, 5, 0, 0, 0, time.FixedZone("x", 3600))
	run := store.Run{ID: "r1", Status: store.RunFailed, ExitCode: 1, Started: start, Finished: start.Add(2500 * time.Millisecond),
		Requested: []string{"build"}, MemoryBudget: 1 << 30, MemorySource: "default"}
	zero, restored := 0, 3
	execs := []store.Execution{
		{TaskID: "a#build", Status: store.StatusHit, Hash: "k1", CacheSource: CacheSourceLocal, Saved: 700 * time.Millisecond,
			Duration: 20 * time.Millisecond, UserCPU: time.Second, RestoredFiles: &restored},
		{TaskID: "b#build", Status: store.StatusHit, Hash: "k2", CacheSource: CacheSourceRemote, Saved: 300 * time.Millisecond},
		{TaskID: "c#build", Status: store.StatusMiss, Hash: "k3", ExitCode: &zero, Duration: 2 * time.Second,
			UserCPU: 3 * time.Second, SysCPU: time.Second, PeakRSSBytes: 5 << 20, Waited: 40 * time.Millisecond},
		{TaskID: "d#build", Status: store.StatusTimedOut, Hash: "k4", TimedOut: true, Duration: time.Second},
		{TaskID: "e#build", Status: store.StatusBlocked, BlockedBy: "d#build"},
		{TaskID: "f#build", Status: store.StatusSkipped, NotReady: []string{"e#build"}},
		{TaskID: "g#build", Status: store.StatusCancelled},
	}
	s := Summarize(run, execs)
	want := Totals{Tasks: 7, Hits: 2, Misses: 1, Failed: 1, Blocked: 1, Skipped: 1, Cancelled: 1, WallMs: 2500,
		SavedMs: 1000, RemoteHits: 1}
	if s.Totals != want {
		t.Errorf("totals %+v, want %+v", s.Totals, want)
	}
	if s.OK || s.ExitCode != 1 || s.Status != store.RunFailed || s.RunID != "r1" || !s.StartedAt.Equal(start) || s.StartedAt.Location() != time.UTC {
		t.Errorf("run: ok %v exit %d status %q id %q started %v", s.OK, s.ExitCode, s.Status, s.RunID, s.StartedAt)
	}
	if s.Memory != (Memory{BudgetBytes: 1 << 30, Source: "default"}) {
		t.Errorf("memory %+v", s.Memory)
	}
	hit, miss, blocked := s.Tasks[0], s.Tasks[2], s.Tasks[4]
	if hit.CacheSource == nil || *hit.CacheSource != CacheSourceLocal || hit.SavedMs != 700 || hit.CPUParallelism != 0 ||
		hit.RestoredFiles == nil || *hit.RestoredFiles != 3 {
		t.Errorf("hit row %+v: a hit's parallelism is 0 (a restore), its source and saving kept", hit)
	}
	if miss.CacheSource != nil || miss.CPUParallelism != 2 || miss.PeakRssBytes != 5<<20 || miss.WaitedMs != 40 ||
		miss.ExitCode == nil || *miss.ExitCode != 0 {
		t.Errorf("miss row %+v: 4 s of CPU over 2 s is a parallelism of 2", miss)
	}
	if blocked.BlockedBy == nil || *blocked.BlockedBy != "d#build" || blocked.Hash != "" {
		t.Errorf("blocked row %+v", blocked)
	}
	// Lists are [] rather than null in the document, so that an agent reads one shape.
	js, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, frag := range []string{`"sandboxViolations":[]`, `"notReady":["e#build"]`, `"requested":["build"]`} {
		if !strings.Contains(string(js), frag) {
			t.Errorf("the document lacks %s: %s", frag, js)
		}
	}
	if strings.Contains(string(js), "null,\"notReady\"") || strings.Contains(string(js), `"inputsChangedDuringRun"`) {
		t.Errorf("the document holds a null list or an empty inputsChangedDuringRun: %s", js)
	}
}

// A run's row alone says its outcome: a failure with no exit status recorded exits 1, a run
// still running has no exit status and no wall time yet.
func TestOutcome(t *testing.T) {
	start := time.Unix(1000, 0)
	for _, tc := range []struct {
		run  store.Run
		ok   bool
		exit int
		wall int64
	}{
		{store.Run{Status: store.RunOK, Started: start, Finished: start.Add(time.Second)}, true, 0, 1000},
		{store.Run{Status: store.RunFailed, ExitCode: 2, Started: start, Finished: start.Add(time.Second)}, false, 2, 1000},
		{store.Run{Status: store.RunCancelled, Started: start, Finished: start.Add(time.Second)}, false, 1, 1000},
		{store.Run{Status: store.RunRunning, Started: start}, false, 0, 0},
	} {
		ok, exit, wall := Outcome(tc.run)
		if ok != tc.ok || exit != tc.exit || wall != tc.wall {
			t.Errorf("Outcome(%s) = %v %d %d, want %v %d %d", tc.run.Status, ok, exit, wall, tc.ok, tc.exit, tc.wall)
		}
	}
}

// A forced miss reads forced, counted among the misses and as forced; a pass that stored no
// entry carries its reason, and no other task does.
func TestSummarizeForcedAndNotCached(t *testing.T) {
	why := "output dist/cfg is a symlink to ../../../vx.workspace.ts, outside its project"
	execs := []store.Execution{
		{TaskID: "a#build", Status: store.StatusMiss, Forced: true},
		{TaskID: "b#build", Status: store.StatusMiss, NotCached: why},
		{TaskID: "c#build", Status: store.StatusFailed, Forced: true},
	}
	s := Summarize(store.Run{ID: "r1", Status: store.RunFailed}, execs)
	if got := []store.Status{s.Tasks[0].Status, s.Tasks[1].Status, s.Tasks[2].Status}; got[0] != store.StatusForced ||
		got[1] != store.StatusMiss || got[2] != store.StatusFailed {
		t.Errorf("statuses %v, want forced, miss, failed", got)
	}
	if s.Totals.Misses != 2 || s.Totals.Forced != 1 || s.Totals.Failed != 1 || s.Totals.Tasks != 3 {
		t.Errorf("totals %+v", s.Totals)
	}
	if s.Tasks[1].NotCachedReason != why || s.Tasks[0].NotCachedReason != "" {
		t.Errorf("notCachedReason %q, %q", s.Tasks[0].NotCachedReason, s.Tasks[1].NotCachedReason)
	}
	js, _ := json.Marshal(s.Tasks[0])
	if strings.Contains(string(js), "notCachedReason") {
		t.Errorf("a task that was cached says notCachedReason: %s", js)
	}
}

// A summary written and read back is the same summary, the original's fields with it.
func TestSummaryRoundTripsTheOriginalsFields(t *testing.T) {
	at := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	zero := 0
	s := Summarize(store.Run{ID: "r1", Status: store.RunCancelled, Started: at, Finished: at.Add(time.Second)}, []store.Execution{
		{TaskID: "a#build", Project: "a", Task: "build", Status: store.StatusHit, CacheSource: CacheSourceLocal, RestoredFiles: &zero},
		{TaskID: "a#test", Project: "a", Task: "test", Status: store.StatusCancelled},
	})
	js, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	again, err := json.Marshal(&back)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(js) {
		t.Errorf("read back:\n%s\nwritten:\n%s", again, js)
	}
	for _, want := range []string{`"endedAt":"2026-12-07T06:00:01Z","totalMs":1000,"aborted":[{"taskId":"a#test"`,
		`"summary":{"successful":0,"failed":0,"skipped":0,"cachedLocal":1,"restoredLocal":0,"restoredRemote":0,"upToDate":1,"cachedRemote":0,"aborted":1,"total":1}`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("the summary lacks %s: %s", want, js)
		}
	}
}
