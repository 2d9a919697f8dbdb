package configlock

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/graph"
)

// testWorkspace builds a two-project workspace in a temp root.
func testWorkspace(t *testing.T) *graph.Workspace {
	t.Helper()
	lib := &graph.Project{Name: "lib", Dir: "packages/lib", Tasks: map[string]*graph.Task{
		"build": {ID: "lib#build", Project: "lib", Name: "build", Command: "tsc", Outputs: []string{"dist/**"}, Cache: true},
	}}
	app := &graph.Project{Name: "app", Dir: "apps/app", DependsOn: []string{"lib"}, Tasks: map[string]*graph.Task{
		"build": {ID: "app#build", Project: "app", Name: "build", Command: "vite build", DependsOn: []string{"lib#build"},
			Inputs: []string{"src/**"}, Outputs: []string{"dist/**"}, Env: []string{"NODE_ENV"}, Cache: true},
		"deploy": {ID: "app#deploy", Project: "app", Name: "deploy", Command: "sh deploy.sh",
			ExecEnv: map[string]graph.EnvValue{"STAGE": {Value: "prod"}, "TOKEN": {Secret: "DEPLOY_TOKEN"}}},
	}}
	ws := &graph.Workspace{Root: t.TempDir(), Projects: []*graph.Project{lib, app}}
	ws.Index()
	return ws
}

func TestLockThenCheckIsUpToDate(t *testing.T) {
	ws := testWorkspace(t)
	r, err := Write(ws)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Written || !r.UpToDate || len(r.Recorded) != 3 {
		t.Fatalf("write report = %+v", r)
	}
	c, err := Check(ws)
	if err != nil {
		t.Fatal(err)
	}
	if !c.UpToDate || len(c.Audited) != 3 || len(c.NotAudited) != 0 || len(c.Problems) != 0 || c.ExitCode != 0 {
		t.Fatalf("check = %+v", c)
	}
	again, err := Write(ws)
	if err != nil {
		t.Fatal(err)
	}
	if again.Written {
		t.Fatal("an unchanged lock was rewritten")
	}
	if st := State(ws); st.State != StateUpToDate || st.Audited != 3 {
		t.Fatalf("state = %+v", st)
	}
}

func TestLockNeverHoldsSecretValues(t *testing.T) {
	ws := testWorkspace(t)
	ws.Secrets = []string{"s3cr3t"}
	if _, err := Write(ws); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(ws.Root, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "s3cr3t") || !strings.Contains(string(data), `"secret": "DEPLOY_TOKEN"`) {
		t.Fatalf("lock file:\n%s", data)
	}
}

func TestCheckNamesDrift(t *testing.T) {
	ws := testWorkspace(t)
	if _, err := Write(ws); err != nil {
		t.Fatal(err)
	}
	task, _ := ws.Task("app#build")
	task.Command = "vite build --mode evil"
	task.Inputs = nil
	deploy, _ := ws.Task("app#deploy")
	deploy.ExecEnv["TOKEN"] = graph.EnvValue{Secret: "OTHER"}
	lib, _ := ws.Project("lib")
	lib.Tasks["test"] = &graph.Task{ID: "lib#test", Project: "lib", Name: "test", Command: "vitest", Cache: true}
	delete(lib.Tasks, "build")
	ws.Index()

	c, err := Check(ws)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(c.Problems)
	want := `[{"taskId":"app#build","field":"command","locked":"vite build","current":"vite build --mode evil"},` +
		`{"taskId":"app#build","field":"inputs","locked":["src/**"],"current":null},` +
		`{"taskId":"app#deploy","field":"exec.env","locked":{"STAGE":{"value":"prod"},"TOKEN":{"secret":"DEPLOY_TOKEN"}},"current":{"STAGE":{"value":"prod"},"TOKEN":{"secret":"OTHER"}}},` +
		`{"taskId":"lib#build","field":"task","locked":"present","current":"absent"},` +
		`{"taskId":"lib#test","field":"task","locked":"absent","current":"present"}]`
	if string(got) != want {
		t.Fatalf("problems\n got %s\nwant %s", got, want)
	}
	if c.UpToDate || c.ExitCode != 1 {
		t.Fatalf("check = %+v", c)
	}
	if strings.Join(c.NotAudited, ",") != "app#build,app#deploy,lib#test" || len(c.Audited) != 0 {
		t.Fatalf("audited %v notAudited %v", c.Audited, c.NotAudited)
	}
	if st := State(ws); st.State != StateDrift || st.Problems != 5 {
		t.Fatalf("state = %+v", st)
	}
}

func TestCheckWithoutLock(t *testing.T) {
	ws := testWorkspace(t)
	c, err := Check(ws)
	if err != nil {
		t.Fatal(err)
	}
	// One problem, the missing lock, rather than one per task; the tasks are not audited.
	if c.UpToDate || !c.Missing || len(c.NotAudited) != 3 || c.NotAuditedCount != 3 || len(c.Problems) != 0 ||
		len(c.Lines) != 1 || !strings.Contains(c.Lines[0], "vx.lock is missing") || c.ExitCode != 1 {
		t.Fatalf("check = %+v", c)
	}
	if st := State(ws); st.State != StateAbsent || st.NotAudited != 3 {
		t.Fatalf("state = %+v", st)
	}
}

func TestBrokenLock(t *testing.T) {
	ws := testWorkspace(t)
	path := filepath.Join(ws.Root, FileName)
	if err := os.WriteFile(path, []byte(`{"version": 9, "tasks": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Check(ws)
	if err == nil || !strings.Contains(err.Error(), "vx.lock: lock format version 9") {
		t.Fatalf("err = %v", err)
	}
	if st := State(ws); st.State != StateUnreadable || st.Error == "" {
		t.Fatalf("state = %+v", st)
	}
	if _, err := Write(ws); err != nil {
		t.Fatalf("write over a broken lock: %v", err)
	}
	if c, err := Check(ws); err != nil || !c.UpToDate {
		t.Fatalf("check after rewrite = %+v, %v", c, err)
	}
}

// TestRoundTrip checks that what a lock file holds reads back equal to what it was written from,
// empty lists and sandboxes included, so no task drifts against its own lock.
func TestRoundTrip(t *testing.T) {
	ws := testWorkspace(t)
	lib, _ := ws.Project("lib")
	lib.Tasks["lint"] = &graph.Task{ID: "lib#lint", Project: "lib", Name: "lint", Command: "eslint",
		Inputs: []string{}, Outputs: []string{}, Env: []string{}, ExecEnv: map[string]graph.EnvValue{"EMPTY": {}},
		Sandbox: &graph.Sandbox{Read: []string{}, Write: []string{"dist/**"}}}
	ws.Index()
	if _, err := Write(ws); err != nil {
		t.Fatal(err)
	}
	c, err := Check(ws)
	if err != nil {
		t.Fatal(err)
	}
	if !c.UpToDate {
		t.Fatalf("drift against its own lock: %+v", c.Problems)
	}
}
