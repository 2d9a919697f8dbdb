package runner

import (
	"context"
	"errors"
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
			"vx run: no task matches --all --filter empty"},
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
