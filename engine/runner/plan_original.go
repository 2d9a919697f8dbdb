package runner

import (
	"encoding/json"
	"strings"

	"github.com/vzn/vx/engine/store"
)

// Plan row predictions in the original's words (its cacheStatus).
const (
	originalHitLocal = "hit-local"
	originalMiss     = "miss"
	originalNoCache  = "no-cache"
)

// MarshalJSON writes the row with the original's fields after vx's: the halves of its id
// (project, task), its prediction in the original's words (cacheStatus: hit-local, miss, or
// no-cache for a task that is never cached) and its dependencies under the original's name (deps).
func (t PlanTask) MarshalJSON() ([]byte, error) {
	type plain PlanTask
	project, task, _ := strings.Cut(t.TaskID, "#")
	status := originalMiss
	switch {
	case !t.Cacheable:
		status = originalNoCache
	case t.Cache == store.StatusHit:
		status = originalHitLocal
	}
	deps := t.DependsOn
	if deps == nil {
		deps = []string{}
	}
	return json.Marshal(struct {
		plain
		Project     string   `json:"project"`
		Task        string   `json:"task"`
		CacheStatus string   `json:"cacheStatus"`
		Deps        []string `json:"deps"`
	}{plain(t), project, task, status, deps})
}
