package hasher

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vzn/vx/engine/graph"
)

// probeWorkspace is a workspace of one project whose tasks probe a tool: the probe counts its
// runs in the root's count file and prints what it is given.
func probeWorkspace(t *testing.T, probe string) (*graph.Workspace, *graph.Project, []*graph.Task) {
	root := t.TempDir()
	write(t, root, "app/a.txt", "a")
	p := &graph.Project{Name: "app", Dir: "app", AbsDir: filepath.Join(root, "app"), Tasks: map[string]*graph.Task{}}
	var tasks []*graph.Task
	for _, name := range []string{"build", "test", "lint"} {
		tk := &graph.Task{ID: "app#" + name, Project: "app", Name: name, Command: "true", RuntimeInputs: []string{probe}}
		p.Tasks[name] = tk
		tasks = append(tasks, tk)
	}
	ws := &graph.Workspace{Root: root, CacheDir: filepath.Join(root, ".vx"), Projects: []*graph.Project{p}}
	ws.Index()
	return ws, p, tasks
}

func TestRuntimeInputsRunOncePerRun(t *testing.T) {
	ws, p, tasks := probeWorkspace(t, "echo run >> count; echo '  v22.1.0  '")
	ws.GlobalRuntimeInputs = []string{"echo 10.2.0"}
	h := New(Options{Workspace: ws, Environ: []string{"PATH=" + os.Getenv("PATH")}})
	var wg sync.WaitGroup
	ms := make([]*Manifest, len(tasks))
	errs := make([]error, len(tasks))
	for i, tk := range tasks {
		wg.Go(func() { ms[i], errs[i] = h.Manifest(context.Background(), p, tk, nil) })
	}
	wg.Wait()
	for i, m := range ms {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		want := map[string]string{"echo run >> count; echo '  v22.1.0  '": "v22.1.0", "echo 10.2.0": "10.2.0"}
		if len(m.Runtime) != 2 || m.Runtime["echo 10.2.0"] != want["echo 10.2.0"] || m.Runtime["echo run >> count; echo '  v22.1.0  '"] != "v22.1.0" {
			t.Fatalf("%s: runtime %v, want %v", m.TaskID, m.Runtime, want)
		}
	}
	count, err := os.ReadFile(filepath.Join(ws.Root, "count"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(count), "run\n"); n != 1 {
		t.Fatalf("the probe ran %d times for three tasks, want once", n)
	}
}

func TestRuntimeInputsSeeTheWorkspaceEnvironment(t *testing.T) {
	ws, p, tasks := probeWorkspace(t, `echo "[$NODE_CHANNEL][$NPM_TOKEN]"`)
	environ := []string{"PATH=" + os.Getenv("PATH"), "NODE_CHANNEL=lts", "NPM_TOKEN=s3cret"}
	m, err := New(Options{Workspace: ws, Environ: environ}).Manifest(context.Background(), p, tasks[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Runtime[tasks[0].RuntimeInputs[0]]; got != "[][]" {
		t.Fatalf("strict: the probe saw %q, want nothing undeclared", got)
	}
	ws.Env = []string{"NODE_CHANNEL"}
	m, err = New(Options{Workspace: ws, Environ: environ}).Manifest(context.Background(), p, tasks[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Runtime[tasks[0].RuntimeInputs[0]]; got != "[lts][]" {
		t.Fatalf("the workspace's env: the probe saw %q, want [lts][] (never a credential it does not name)", got)
	}
}

func TestRuntimeInputFailureNamesTheProbe(t *testing.T) {
	ws, p, tasks := probeWorkspace(t, "echo 'pnpm: not found' >&2; exit 127")
	_, err := New(Options{Workspace: ws, Environ: []string{"PATH=" + os.Getenv("PATH")}}).Manifest(context.Background(), p, tasks[0], nil)
	want := `hash app#build: runtime input "echo 'pnpm: not found' >&2; exit 127" failed with exit code 127: pnpm: not found`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
}

func TestRuntimeInputCancelledIsAskedAgain(t *testing.T) {
	ws, p, tasks := probeWorkspace(t, "echo run >> count; echo v1")
	h := New(Options{Workspace: ws, Environ: []string{"PATH=" + os.Getenv("PATH")}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Manifest(ctx, p, tasks[0], nil); err == nil {
		t.Fatal("a cancelled task's manifest: no error")
	}
	m, err := h.Manifest(context.Background(), p, tasks[1], nil)
	if err != nil {
		t.Fatalf("the next task: %v, want the probe run again for it", err)
	}
	if got := m.Runtime[tasks[1].RuntimeInputs[0]]; got != "v1" {
		t.Fatalf("the next task's probe output %q, want v1", got)
	}
}
