package runner

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/vxerr"
	"github.com/vzn/vx/engine/workspace"
)

// PlanDocument answers vx run --dry's plan, or vx run's refusal as a usage error.
func TestPlanDocument(t *testing.T) {
	f := newFixture(t)
	p := f.project("p")
	f.task(p, "a", "true", nil)
	f.project("empty")
	f.ws.Index()
	ctx := context.Background()
	getenv := func(string) string { return "" }

	plan, err := PlanDocument(ctx, f.ws, Request{SelectOptions: workspace.SelectOptions{Tasks: []string{"a"}}, Concurrency: 3, Getenv: getenv})
	if err != nil || plan.Workers != 3 || len(plan.Tasks) != 1 || plan.Tasks[0].TaskID != "p#a" || !plan.Tasks[0].Requested {
		t.Fatalf("plan: %+v %v", plan, err)
	}
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{Request{SelectOptions: workspace.SelectOptions{All: true, Filters: []string{"empty"}}},
			"no task matches --all --filter empty"},
		{Request{SelectOptions: workspace.SelectOptions{Tasks: []string{"a"}}, Concurrency: -1},
			"--concurrency -1: want a positive number"},
		{Request{SelectOptions: workspace.SelectOptions{Tasks: []string{"a"}}, Getenv: func(k string) string {
			return map[string]string{"VX_CONCURRENCY": "many"}[k]
		}}, `VX_CONCURRENCY="many": want a positive number`},
	} {
		_, err := PlanDocument(ctx, f.ws, tc.req)
		var usage *vxerr.UsageError
		if !errors.As(err, &usage) || err.Error() != tc.want {
			t.Errorf("PlanDocument(%+v) = %v, want the usage error %q", tc.req.SelectOptions, err, tc.want)
		}
	}
}

// A selection git narrowed to no task runs nothing and is a success: no state folder, no run id.
func TestNothingAffected(t *testing.T) {
	f := newFixture(t)
	f.task(f.project("p"), "a", "true", nil)
	why := "nothing affected since main"
	sum, _ := f.run(nil, func(o *Options) { o.NothingAffected = why })
	if !sum.OK || sum.ExitCode != 0 || sum.RunID != "" || len(sum.Tasks) != 0 || sum.Tasks == nil || sum.NoTasks != why {
		t.Errorf("run of nothing: %+v", sum)
	}
	plan, err := DryRun(context.Background(), PlanOptions{Options: Options{Workspace: f.ws, NothingAffected: why}})
	if err != nil || len(plan.Tasks) != 0 || plan.Tasks == nil || plan.NoTasks != why {
		t.Errorf("plan of nothing: %+v %v", plan, err)
	}
	var text strings.Builder
	if err := plan.WriteText(&text); err != nil || text.String() != "no tasks to run: "+why+"\n" {
		t.Errorf("plan text = %q (%v)", text.String(), err)
	}
	if _, err := os.Stat(f.ws.CacheDir); !os.IsNotExist(err) {
		t.Errorf("a run of nothing made the state folder: %v", err)
	}
}
