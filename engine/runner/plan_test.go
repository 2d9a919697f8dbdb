package runner

import (
	"context"
	"os"
	"strings"
	"testing"
)

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
