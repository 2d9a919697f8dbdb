package store

import (
	"context"
	"slices"
	"testing"
	"time"
)

// Every reader narrowed to a project reads that project's executions and no other's, among
// projects whose names sort next to it ("p!", "p-x", "p1", "pa") or begin with it.
func TestProjectFilters(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.Now()
	projects := []string{"p", "p!", "p-x", "p1", "pa", "@s/p"}
	var runIDs []string
	for i, project := range projects {
		id := NewRunID(start.Add(time.Duration(i) * time.Second))
		runIDs = append(runIDs, id)
		if err := st.BeginRun(ctx, Run{ID: id, Started: start}); err != nil {
			t.Fatal(err)
		}
		var execs []Execution
		for k, task := range []string{"build", "test"} {
			execs = append(execs, Execution{RunID: id, TaskID: project + "#" + task, Project: project, Task: task, Ord: k,
				Status: StatusHit, Started: start, Hash: project + task, CacheSource: "remote"})
		}
		if err := st.Record(ctx, Batch{Executions: execs}); err != nil {
			t.Fatal(err)
		}
		if err := st.FinishRun(ctx, id, RunOK, 0, start); err != nil {
			t.Fatal(err)
		}
	}
	since := start.Add(-time.Hour)
	for i, project := range projects {
		execs, err := st.TaskExecutions(ctx, ExecQuery{Project: project})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range execs {
			ids = append(ids, e.TaskID)
		}
		slices.Sort(ids)
		if want := []string{project + "#build", project + "#test"}; !slices.Equal(ids, want) {
			t.Errorf("TaskExecutions of %s: %v, want %v", project, ids, want)
		}
		counts, err := st.CountCache(ctx, project, since)
		if err != nil || counts.ExecutionsSince != 2 || counts.HitsSince != 2 {
			t.Errorf("CountCache of %s: %+v %v, want 2 executions and 2 hits", project, counts, err)
		}
		if n, err := st.CountRemoteHits(ctx, project, since); err != nil || n != 2 {
			t.Errorf("CountRemoteHits of %s: %d %v, want 2", project, n, err)
		}
		runs, err := st.Runs(ctx, RunQuery{Project: project})
		if err != nil || len(runs) != 1 || runs[0].ID != runIDs[i] {
			t.Errorf("Runs of %s: %+v %v, want only %s", project, runs, err, runIDs[i])
		}
		err = st.Snapshot(ctx, func(sn *Snapshot) error {
			got, err := sn.StatusCounts(ctx, Window{Oldest: runIDs[0], Newest: runIDs[len(runIDs)-1], Project: project})
			if err != nil {
				return err
			}
			if len(got) != 1 || got[runIDs[i]][StatusHit] != 2 {
				t.Errorf("the window of %s counts %v, want 2 hits in %s alone", project, got, runIDs[i])
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
