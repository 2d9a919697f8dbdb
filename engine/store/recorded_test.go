package store_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/vzn/vx/engine/store"
)

// What Recorded answers of a run and its executions is what the index reads back once they are
// recorded, to the nanosecond and the nil list: a run's summary is made from it in place of a
// read-back, and must be the document `vx last` answers.
func TestRecordedIsWhatTheIndexReadsBack(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Times with every digit below the millisecond, and no monotonic reading once recorded.
	started := time.Unix(1_800_000_000, 123_456_789)
	exit, restored := 3, 0
	run := store.Run{ID: store.NewRunID(started), Started: started, PID: 42, Host: "h", Args: []string{"run", "build", "bad\xffutf8"},
		TaskCount: 4, Concurrency: 2, MemoryBudget: 1 << 30, MemorySource: "cgroup"}
	execs := []store.Execution{
		{RunID: run.ID, TaskID: "a#build", Project: "a", Task: "build", Ord: 0, Status: store.StatusHit, Started: started.Add(1_500_001),
			Duration: 2_999_999, Saved: 1_234_567_891, Hash: "h1", CacheSource: "local", LogBlob: "b1", LogSource: "cache", RestoredFiles: &restored},
		{RunID: run.ID, TaskID: "b#build", Project: "b", Task: "build", Ord: 1, Status: store.StatusFailed, ExitCode: &exit,
			Started: started.Add(time.Second), Duration: time.Second + 999_999, UserCPU: 1_999_999, SysCPU: 999_999, PeakRSSBytes: 1 << 20,
			TimedOut: true, SandboxViolations: []string{"wrote /etc/x", "é"}, Waited: 1, ReservedBytes: 1 << 25},
		{RunID: run.ID, TaskID: "c#build", Project: "c", Task: "build", Ord: 2, Status: store.StatusBlocked, BlockedBy: "b#build",
			Started: started, NotReady: []string{}, Waited: 2_000_001},
		{RunID: run.ID, TaskID: "d#dev", Project: "d", Task: "dev", Ord: 3, Status: store.StatusMiss, Started: started.Add(-1),
			NotReady: []string{"port 3000"}},
	}
	if err := st.BeginRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	if err := st.Record(ctx, store.Batch{Executions: execs}); err != nil {
		t.Fatal(err)
	}
	run.Status, run.ExitCode, run.Finished = store.RunFailed, 1, started.Add(3*time.Second+999_999)
	if err := st.FinishRun(ctx, run.ID, run.Status, run.ExitCode, run.Finished); err != nil {
		t.Fatal(err)
	}

	gotRun, _, err := st.RunByID(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := run.Recorded(); !reflect.DeepEqual(gotRun, want) {
		t.Errorf("the run read back:\n%#v\nRecorded:\n%#v", gotRun, want)
	}
	got, err := st.Executions(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(execs) {
		t.Fatalf("%d executions read back, want %d", len(got), len(execs))
	}
	for i, e := range execs {
		if want := e.Recorded(); !reflect.DeepEqual(got[i], want) {
			t.Errorf("execution %s read back:\n%#v\nRecorded:\n%#v", e.TaskID, got[i], want)
		}
	}
	// Recorded shares nothing with what it was made from.
	if r := execs[1].Recorded(); r.ExitCode == execs[1].ExitCode || &r.SandboxViolations[0] == &execs[1].SandboxViolations[0] {
		t.Error("Recorded shares the exit code or a list with the execution it was made from")
	}
}
