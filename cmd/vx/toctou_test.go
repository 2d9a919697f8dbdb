//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/summary"
)

// toctouWorkspace is one project whose build copies src/in.txt into dist/out.txt. The build
// waits at two gates the test opens ($GATE/go, then $GATE/go2), saying where it is: $GATE/started
// once it began, $GATE/read once it read its input. With both gates open it runs straight through.
func toctouWorkspace() map[string]string {
	return map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
import { mcp } from '@vzn/vx-mcp'
export default defineWorkspace({
  projects: ['packages/*'],
  plugins: [mcp({ run: true })],
  passThroughEnv: ['GATE'],
  tasks: {
    build: { command: 'sh ../../build.sh', inputs: ['src/**'], outputs: ['dist/**'] },
  },
})
`,
		"build.sh": `set -e
touch "$GATE/started"
while [ ! -f "$GATE/go" ]; do sleep 0.02; done
mkdir -p dist
cat src/in.txt > dist/out.txt
touch "$GATE/read"
while [ ! -f "$GATE/go2" ]; do sleep 0.02; done
`,
		".gitignore":              ".vx/\ndist/\n",
		"packages/a/package.json": `{"name": "a"}`,
		"packages/a/src/in.txt":   "v2\n",
	}
}

// toctou is a workspace of toctouWorkspace and the gate folder its build waits on.
type toctou struct {
	dir, gate string
}

func newTOCTOU(t *testing.T) *toctou {
	t.Helper()
	w := &toctou{dir: writeWorkspace(t, toctouWorkspace()), gate: t.TempDir()}
	gitInit(t, w.dir)
	w.open()
	return w
}

// env is what a vx of the workspace needs besides the test's environment.
func (w *toctou) env() []string { return []string{"GATE=" + w.gate} }

// close shuts both gates, so that the next build waits.
func (w *toctou) close(t *testing.T) {
	t.Helper()
	for _, name := range []string{"go", "go2", "started", "read"} {
		if err := os.Remove(filepath.Join(w.gate, name)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}

// open opens both gates.
func (w *toctou) open() {
	for _, name := range []string{"go", "go2"} {
		_ = os.WriteFile(filepath.Join(w.gate, name), nil, 0o644)
	}
}

// openGate opens one gate.
func (w *toctou) openGate(t *testing.T, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(w.gate, name), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitFor waits until the build says where it is (the file name exists in the gate folder).
func (w *toctou) waitFor(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(w.gate, name)); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the build never got to %s", name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// input writes src/in.txt.
func (w *toctou) input(t *testing.T, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(w.dir, "packages/a/src/in.txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// output answers dist/out.txt.
func (w *toctou) output(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(w.dir, "packages/a/dist/out.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// started is a `vx run build --format json` started in the background.
type started struct {
	done           chan struct{}
	stdout, stderr bytes.Buffer
}

// start starts `vx run build --format json`.
func (w *toctou) start(t *testing.T) *started {
	t.Helper()
	cmd := vxCommand(t, w.dir, "run", "build", "--format", "json")
	cmd.Env = append(cmd.Env, w.env()...)
	r := &started{done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &r.stdout, &r.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-r.done
	})
	return r
}

// wait waits for the run to end and answers its only task's row and its stderr.
func (r *started) wait(t *testing.T) (summary.TaskResult, string) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(90 * time.Second):
		t.Fatal("vx run did not end")
	}
	var sum summary.Summary
	if err := json.Unmarshal(r.stdout.Bytes(), &sum); err != nil || len(sum.Tasks) != 1 {
		t.Fatalf("vx run answered %q (%v); stderr:\n%s", r.stdout.String(), err, r.stderr.String())
	}
	return sum.Tasks[0], r.stderr.String()
}

// TestRunInputEditedWhileItRuns: a build started at v2 that reads v3, written while it runs, is
// not cached under v2's key; it says which file changed, on stderr and in its summary row. Back at
// v2, the build runs again rather than hitting v3's output. A file added to the inputs while a
// build runs is caught alike.
func TestRunInputEditedWhileItRuns(t *testing.T) {
	t.Parallel()
	w := newTOCTOU(t)
	w.close(t)
	r := w.start(t)
	w.waitFor(t, "started")
	w.input(t, "v3\n")
	w.open()
	row, stderr := r.wait(t)
	if row.Status != "miss" || !slices.Equal(row.InputsChangedDuringRun, []string{"src/in.txt"}) {
		t.Errorf("the build that read an edit: %+v, want a miss with inputsChangedDuringRun [src/in.txt]\n%s", row, stderr)
	}
	if !strings.Contains(stderr, "a#build: not cached: src/in.txt changed while it ran") {
		t.Errorf("stderr does not say which input changed:\n%s", stderr)
	}

	w.input(t, "v2\n")
	row, stderr = w.start(t).wait(t)
	if row.Status != "miss" || w.output(t) != "v2\n" {
		t.Fatalf("back at v2: %s with output %q, want a miss that outputs v2 (v3's output was stored under v2's key)\n%s",
			row.Status, w.output(t), stderr)
	}
	if row.InputsChangedDuringRun != nil {
		t.Errorf("a quiet build says %q changed", row.InputsChangedDuringRun)
	}

	// A file that enters the inputs while the build runs.
	w.input(t, "v4\n")
	w.close(t)
	r = w.start(t)
	w.waitFor(t, "started")
	extra := filepath.Join(w.dir, "packages/a/src/extra.txt")
	if err := os.WriteFile(extra, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.open()
	if row, stderr = r.wait(t); !slices.Equal(row.InputsChangedDuringRun, []string{"src/extra.txt"}) {
		t.Fatalf("a new input during the build: %+v\n%s", row, stderr)
	}
	if err := os.Remove(extra); err != nil {
		t.Fatal(err)
	}
	if row, stderr = w.start(t).wait(t); row.Status != "miss" {
		t.Fatalf("without the new file, the build %s; want a miss (nothing was cached under v4's key)\n%s", row.Status, stderr)
	}
}

// runTasksRow calls runTasks(build) and answers its only task's row.
func runTasksRow(t *testing.T, s *runSession) summary.TaskResult {
	t.Helper()
	row, err := callRunTasksRow(s)
	if err != nil {
		t.Fatal(err)
	}
	return row
}

// callRunTasksRow is runTasksRow for another goroutine than the test's.
func callRunTasksRow(s *runSession) (summary.TaskResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), runCallTimeout)
	defer cancel()
	r, err := callRunTool(ctx, s.cs, "runTasks", map[string]any{"tasks": []string{"build"}}, "")
	if err != nil {
		return summary.TaskResult{}, err
	}
	var ans struct {
		Summary *summary.Summary `json:"summary"`
	}
	if r.isError || json.Unmarshal(r.structured, &ans) != nil || ans.Summary == nil || len(ans.Summary.Tasks) != 1 {
		return summary.TaskResult{}, fmt.Errorf("runTasks answered %s (isError %v)", r.text, r.isError)
	}
	return ans.Summary.Tasks[0], nil
}

// TestRunTasksInputEditedWhileItRuns: through vx mcp, a build the server's kept child runs from
// v2 that reads v3, written while it runs, is not cached under v2's key, and its row says which
// file changed; back at v2, runTasks runs it again rather than hitting v3's output.
func TestRunTasksInputEditedWhileItRuns(t *testing.T) {
	t.Parallel()
	w := newTOCTOU(t)
	s := startRunSession(t, w.dir, w.env()...)
	// A first call, at v1, leaves a child started ahead for the next, which the watcher's state
	// plans.
	w.input(t, "v1\n")
	if row := runTasksRow(t, s); row.Status != "miss" {
		t.Fatalf("the first build: %+v", row)
	}
	w.close(t)
	w.input(t, "v2\n")
	type answer struct {
		row summary.TaskResult
		err error
	}
	answers := make(chan answer, 1)
	go func() {
		row, err := callRunTasksRow(s)
		answers <- answer{row, err}
	}()
	w.waitFor(t, "started")
	w.input(t, "v3\n")
	w.open()
	a := <-answers
	if a.err != nil {
		t.Fatal(a.err)
	}
	if row := a.row; row.Status != "miss" || !slices.Equal(row.InputsChangedDuringRun, []string{"src/in.txt"}) {
		t.Errorf("the build that read an edit: %+v, want a miss with inputsChangedDuringRun [src/in.txt]", row)
	}

	w.input(t, "v2\n")
	if row := runTasksRow(t, s); row.Status != "miss" || w.output(t) != "v2\n" {
		t.Fatalf("back at v2: %s with output %q, want a miss that outputs v2 (v3's output was stored under v2's key)",
			row.Status, w.output(t))
	}
}
