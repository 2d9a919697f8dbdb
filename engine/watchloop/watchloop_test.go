package watchloop

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vzn/vx/engine/runner"
	"github.com/vzn/vx/engine/runrequest"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
	"github.com/vzn/vx/engine/watch"
	"github.com/vzn/vx/engine/workspace"
	"github.com/vzn/vx/internal/testkit"
)

// fakeRuns stands for the runner: each run reports its tasks and waits until released (then
// every task passes) or cancelled (then every task is cancelled).
type fakeRuns struct {
	started chan []string
	release chan struct{}
}

func (f *fakeRuns) run(ctx context.Context, opts runner.Options) (*summary.Summary, error) {
	f.started <- slices.Clone(opts.TaskIDs)
	status := store.StatusMiss
	select {
	case <-f.release:
	case <-ctx.Done():
		status = store.StatusCancelled
	}
	sum := &summary.Summary{OK: status == store.StatusMiss}
	for _, id := range opts.TaskIDs {
		sum.Tasks = append(sum.Tasks, summary.TaskResult{TaskID: id, Status: status})
	}
	return sum, nil
}

// TestEditDuringARun: an edit that moves a task of the run in progress stops it and starts again
// with what is still to do; an edit that moves none of its tasks waits for it.
func TestEditDuringARun(t *testing.T) {
	root := testkit.TempTree(t, map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({ projects: ['packages/*'], tasks: { build: { command: 'true', inputs: ['src/**'] } } })
`,
		"packages/a/package.json": `{"name": "a"}`, "packages/a/src/a.js": "a\n",
		"packages/b/package.json": `{"name": "b"}`, "packages/b/src/b.js": "b\n",
	})
	root, _ = filepath.EvalSymlinks(root)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	loader := workspace.NewLoader(workspace.Options{Dir: root, Getenv: func(string) string { return "" }})
	ws, err := loader.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := watch.Serve(ws.Root, ws.CacheDir, ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if err := svc.Watcher().WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	f := &fakeRuns{started: make(chan []string, 8), release: make(chan struct{})}
	var lines []string
	var linesMu sync.Mutex
	done := make(chan error, 1)
	go func() {
		done <- Watch(ctx, Options{Loader: loader, Service: svc, Run: f.run, Debounce: 20 * time.Millisecond,
			Request: runrequest.Request{SelectOptions: workspace.SelectOptions{Tasks: []string{"build"}}, Getenv: func(string) string { return "" }},
			Status: func(line string) {
				linesMu.Lock()
				lines = append(lines, line)
				linesMu.Unlock()
			}})
	}()
	next := func() []string {
		t.Helper()
		select {
		case ids := <-f.started:
			return ids
		case <-time.After(30 * time.Second):
			linesMu.Lock()
			defer linesMu.Unlock()
			t.Fatalf("no run started; vx watch said:\n%s", strings.Join(lines, "\n"))
			return nil
		}
	}
	if ids := next(); !slices.Equal(ids, []string{"a#build", "b#build"}) {
		t.Fatalf("the first run: %q", ids)
	}
	// The first run is in progress: an edit of a moves a task of it, which starts again.
	testkit.WriteTree(t, root, map[string]string{"packages/a/src/a.js": "a2\n"})
	if ids := next(); !slices.Equal(ids, []string{"a#build", "b#build"}) {
		t.Fatalf("after an edit during the first run, it ran again %q, want both (neither finished)", ids)
	}
	f.release <- struct{}{}
	// Nothing runs now: an edit of b starts a run of b alone.
	testkit.WriteTree(t, root, map[string]string{"packages/b/src/b.js": "b2\n"})
	if ids := next(); !slices.Equal(ids, []string{"b#build"}) {
		t.Fatalf("an edit of b ran %q", ids)
	}
	// During it, an edit of a moves no task of the run: it waits, then a runs.
	// (Had it stopped the run of b, b would run again beside a.)
	testkit.WriteTree(t, root, map[string]string{"packages/a/src/a.js": "a3\n"})
	waitFor(t, &linesMu, &lines, "packages/a/src/a.js changed: no task of run 3 moved: after it")
	f.release <- struct{}{}
	if ids := next(); !slices.Equal(ids, []string{"a#build"}) {
		t.Fatalf("after the run of b, the edit of a ran %q, want a alone", ids)
	}
	f.release <- struct{}{}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// waitFor waits until a status line holds text.
func waitFor(t *testing.T, mu *sync.Mutex, lines *[]string, text string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		found := slices.ContainsFunc(*lines, func(l string) bool { return strings.Contains(l, text) })
		all := strings.Join(*lines, "\n")
		mu.Unlock()
		if found {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no line %q; vx watch said:\n%s", text, all)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
