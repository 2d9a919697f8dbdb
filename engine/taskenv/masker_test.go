package taskenv

import (
	"strings"
	"testing"

	"github.com/vzn/vx/engine/graph"
)

// TestMasker masks the workspace's secrets, a task's and the extra values, and refuses a task's
// secret too short to mask, naming the task.
func TestMasker(t *testing.T) {
	ws := &graph.Workspace{Secrets: []string{"workspace-secret"}}
	task := &graph.Task{ID: "app#build", ExecEnv: map[string]graph.EnvValue{"TOKEN": {Secret: "TOKEN"}}}
	env := map[string]string{"TOKEN": "task-secret-value"}
	m, err := Masker(ws, []*graph.Task{task}, nil, func(k string) string { return env[k] }, []string{"remote-credential"})
	if err != nil {
		t.Fatal(err)
	}
	got := m.String("workspace-secret task-secret-value remote-credential")
	if strings.Contains(got, "secret") || strings.Contains(got, "credential") {
		t.Errorf("not masked: %q", got)
	}
	env["TOKEN"] = "ab"
	if _, err := Masker(ws, []*graph.Task{task}, nil, func(k string) string { return env[k] }, nil); err == nil || !strings.HasPrefix(err.Error(), "app#build: ") {
		t.Errorf("short secret: err = %v, want one naming app#build", err)
	}
}
