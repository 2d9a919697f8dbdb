package watch

import (
	"path"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/pathglob"
)

// OutputsOf answers which files a task of ws may hold among its outputs — those under the fixed
// leading folder of any task's output glob — so that the watcher keeps their hashes too: a hit
// compares its outputs on disk with its cache entry's.
func OutputsOf(ws *graph.Workspace) func(rel string) bool {
	bases := map[string]bool{}
	for _, id := range ws.TaskIDs() {
		t, _ := ws.Task(id)
		p, ok := ws.Project(t.Project)
		if !ok || len(t.Outputs) == 0 {
			continue
		}
		set, err := pathglob.NewSet(p.Dir, t.Outputs)
		if err != nil {
			continue
		}
		for _, b := range set.Bases() {
			bases[b] = true
		}
	}
	if len(bases) == 0 {
		return nil
	}
	return func(rel string) bool {
		for d := rel; ; d = path.Dir(d) {
			if bases[d] {
				return true
			}
			if d == "." || d == "/" || d == "" {
				return false
			}
		}
	}
}
