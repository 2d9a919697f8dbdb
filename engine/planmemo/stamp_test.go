package planmemo

import (
	"testing"

	"github.com/vzn/vx/engine/handoff"
	"github.com/vzn/vx/internal/testkit"
)

// The memo's stamps are handoff.Stamp's, kept while the workspace, tasks and environment are the
// same; another loaded workspace (a config changed) is stamped again.
func TestMemoHandoffStamp(t *testing.T) {
	ws := testkit.BuildWorkspace("a", "b")
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
