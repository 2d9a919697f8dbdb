package planmemo

import (
	"testing"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/handoff"
)

// The memo's stamps are handoff.Stamp's, kept while the workspace, tasks and environment are the
// same; another loaded workspace (a config changed) is stamped again.
func TestMemoHandoffStamp(t *testing.T) {
	ws := &graph.Workspace{Root: "/ws", CacheDir: "/ws/.vx"}
	for _, name := range []string{"a", "b"} {
		p := &graph.Project{Name: name, Dir: "packages/" + name, Tasks: map[string]*graph.Task{}}
		p.Tasks["build"] = &graph.Task{ID: name + "#build", Project: name, Name: "build", Cache: true,
			Command: "tsc", Outputs: []string{"dist/**"}, DependsOn: []string{}}
		ws.Projects = append(ws.Projects, p)
	}
	ws.Index()
	ids := ws.TaskIDs()
	env := []string{"PATH=/bin", "HOME=/home/u"}
	base := handoff.Stamp(ws, ids, env)
	m := NewMemo()
	for _, tc := range []struct {
		ids, env []string
	}{{ids, env}, {ids, env}, {ids, append(env, "CI=1")}, {ids[:1], env}, {ids, env}} {
		if got, want := m.HandoffStamp(ws, tc.ids, tc.env), handoff.Stamp(ws, tc.ids, tc.env); got != want {
			t.Errorf("the memo's stamp of %v %v is %s, want %s", tc.ids, tc.env, got, want)
		}
	}
	task, _ := ws.Task(ids[0])
	task.Command += " --other"
	other := *ws
	if m.HandoffStamp(&other, ids, env) == base {
		t.Error("the memo kept the stamp of another loaded workspace")
	}
}
