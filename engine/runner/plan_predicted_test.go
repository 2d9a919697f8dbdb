package runner

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/store"
)

// A plan's document carries the original's predicted: wall time, work, the would-run tasks with
// no history (a lower bound when above 0) and the critical path; each task its id.
func TestPlanCarriesPredicted(t *testing.T) {
	p50 := int64(9)
	tasks := []PlanTask{
		{TaskID: "a#build", ID: "a#build", Cache: store.StatusHit, P50Ms: &p50},
		{TaskID: "b#build", ID: "b#build", Cache: store.StatusMiss},
		{TaskID: "c#build", ID: "c#build", Cache: store.StatusHit},
	}
	plan := Plan{WallMs: 40, WorkMs: 50, CriticalPath: []string{"b#build"}, Tasks: tasks, Totals: totalsOf(tasks)}
	js, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"predicted":{"wallMs":40,"workMs":50,"unknownCount":1,"criticalPath":["b#build"]}`; !strings.Contains(string(js), want) ||
		!strings.Contains(string(js), `{"taskId":"b#build","id":"b#build",`) {
		t.Errorf("the plan lacks %s or the ids: %s", want, js)
	}
}
