package planmemo

import (
	"testing"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/runner"
)

// TestRuntimeInputsAreNeverMemoised checks that a key holding a runtime probe's output is made
// again by every plan: a tool upgrade (node -v) changes no folder the watcher sees.
func TestRuntimeInputsAreNeverMemoised(t *testing.T) {
	p := &graph.Project{Name: "app", Dir: "app"}
	plain := &graph.Task{ID: "app#build", Project: "app", Name: "build"}
	probing := &graph.Task{ID: "app#test", Project: "app", Name: "test", RuntimeInputs: []string{"node -v"}}
	ws := &graph.Workspace{Root: t.TempDir()}
	v := &memoView{keysOK: true, ws: ws, keys: map[string]string{"app#build": "k1", "app#test": "k2"}}
	if k, ok := v.Key(runner.KeyedTask{Task: plain, Project: p}, nil); !ok || k != "k1" {
		t.Fatalf("a task without probes: key %q %v, want the memo's", k, ok)
	}
	if k, ok := v.Key(runner.KeyedTask{Task: probing, Project: p}, nil); ok {
		t.Fatalf("a task with runtimeInputs: the memo answered %q", k)
	}
	ws.GlobalRuntimeInputs = []string{"node -v"}
	if k, ok := v.Key(runner.KeyedTask{Task: plain, Project: p}, nil); ok {
		t.Fatalf("a workspace with globalRuntimeInputs: the memo answered %q", k)
	}
}
