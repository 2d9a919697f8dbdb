package runner

import (
	"encoding/json"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/store"
)

// PlanTotals count a plan's tasks: by predicted cache status, those asked for, those that never
// ran, and the predicted misses — what a run would execute — by task name. A summary of a plan
// (planTasks' first answer) begins with them and lists only some of the tasks.
type PlanTotals struct {
	Tasks  int `json:"tasks"`
	Hits   int `json:"hits"`
	Misses int `json:"misses"`
	// Requested counts the tasks asked for (the others come along as dependencies).
	Requested int `json:"requested"`
	// Uncacheable counts the tasks that declare cache: false (always a miss).
	Uncacheable int `json:"uncacheable"`
	// NoHistory counts the tasks without a p50 (they never ran and passed): the prediction takes
	// each for the median task.
	NoHistory int `json:"noHistory"`
	// MissesByName counts the predicted misses by task name (build, test).
	MissesByName map[string]int `json:"missesByName"`
	// unknown counts the predicted misses without a p50: the predicted times are lower bounds
	// when it is above 0.
	unknown int
}

// totalsOf counts a plan's tasks.
func totalsOf(tasks []PlanTask) PlanTotals {
	t := PlanTotals{Tasks: len(tasks), MissesByName: map[string]int{}}
	for _, pt := range tasks {
		switch pt.Cache {
		case store.StatusHit:
			t.Hits++
		default:
			t.Misses++
			_, name, _ := graph.SplitTaskID(pt.TaskID)
			t.MissesByName[name]++
		}
		if pt.Requested {
			t.Requested++
		}
		if !pt.Cacheable {
			t.Uncacheable++
		}
		if pt.P50Ms == nil {
			t.NoHistory++
			if pt.Cache != store.StatusHit {
				t.unknown++
			}
		}
	}
	return t
}

// Predicted is a plan's prediction under the original's names: the wall time, the work, the
// would-run tasks with no history, and the critical path.
type Predicted struct {
	WallMs       int64    `json:"wallMs"`
	WorkMs       int64    `json:"workMs"`
	UnknownCount int      `json:"unknownCount"`
	CriticalPath []string `json:"criticalPath"`
}

// MarshalJSON writes the plan with its prediction also under the original's predicted (its
// critical path as the plan lists it).
func (p Plan) MarshalJSON() ([]byte, error) {
	type plain Plan
	path := p.CriticalPath
	if path == nil {
		path = []string{}
	}
	return json.Marshal(struct {
		plain
		Predicted Predicted `json:"predicted"`
	}{plain(p), Predicted{WallMs: p.WallMs, WorkMs: p.WorkMs, UnknownCount: p.Totals.unknown, CriticalPath: path}})
}
