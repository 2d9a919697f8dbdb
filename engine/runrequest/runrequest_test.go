package runrequest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/vxerr"
	"github.com/vzn/vx/engine/workspace"
)

// PlanDocument answers vx run --dry's plan, or vx run's refusal as a usage error.
func TestPlanDocument(t *testing.T) {
	root := t.TempDir()
	ws := &graph.Workspace{Root: root, CacheDir: filepath.Join(root, ".vx"), ConfigFile: "vx.workspace.ts"}
	for _, name := range []string{"p", "empty"} {
		p := &graph.Project{Name: name, Dir: "packages/" + name, AbsDir: filepath.Join(root, "packages", name),
			Tasks: map[string]*graph.Task{}}
		if err := os.MkdirAll(p.AbsDir, 0o755); err != nil {
			t.Fatal(err)
		}
		ws.Projects = append(ws.Projects, p)
	}
	ws.Projects[0].Tasks["a"] = &graph.Task{ID: "p#a", Project: "p", Name: "a", Command: "true", Cache: true,
		DependsOn: []string{}, Env: []string{}}
	ws.Index()
	ctx := context.Background()
	getenv := func(string) string { return "" }

	plan, err := PlanDocument(ctx, ws, Request{SelectOptions: workspace.SelectOptions{Tasks: []string{"a"}}, Concurrency: 3, Getenv: getenv})
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
		_, err := PlanDocument(ctx, ws, tc.req)
		var usage *vxerr.UsageError
		if !errors.As(err, &usage) || err.Error() != tc.want {
			t.Errorf("PlanDocument(%+v) = %v, want the usage error %q", tc.req.SelectOptions, err, tc.want)
		}
	}
}
