package tools

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/runner"
	"github.com/vzn/vx/engine/runrequest"
	"github.com/vzn/vx/engine/session"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/watch"
	"github.com/vzn/vx/engine/workspace"
	"github.com/vzn/vx/internal/testkit"
)

// A planTasks answered before the server's watcher took its first look plans again in the
// background once it did: the next call's keys then come from the memo, which knows what the
// cache holds (the hand-off carries the index), where they were all to make again.
func TestPlanTasksPlansAheadOnceTheWatcherIsReady(t *testing.T) {
	root := testkit.TempRepo(t, map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({
  projects: ['packages/*'],
  tasks: { build: { command: 'mkdir -p dist && cat src/*.js > dist/out.js', dependsOn: ['^build'], inputs: ['src/**'], outputs: ['dist/**'] } },
})
`,
		".gitignore":              "dist/\n.vx/\n",
		"package.json":            `{"name": "root", "private": true}`,
		"packages/a/package.json": `{"name": "a"}`,
		"packages/a/src/a.js":     "a\n",
		"packages/b/package.json": `{"name": "b", "dependencies": {"a": "*"}}`,
		"packages/b/src/b.js":     "b\n",
	})
	ctx := context.Background()
	getenv := func(string) string { return "" }
	loader := workspace.NewLoader(workspace.Options{Dir: root, Getenv: getenv})
	ws, err := loader.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	req := runrequest.Request{SelectOptions: workspace.SelectOptions{Tasks: []string{"build"}}, Getenv: getenv}
	opts, err := runrequest.Prepare(ctx, ws, req)
	if err != nil {
		t.Fatal(err)
	}
	if sum, err := runner.Run(ctx, opts.Options); err != nil || !sum.OK {
		t.Fatalf("run: %v %+v", err, sum)
	}
	svc, err := watch.Serve(ws.Root, ws.CacheDir, ws, func(msg string) { t.Log(msg) })
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()

	// The watcher answers nothing until the gate opens, as one still taking its first look.
	gate, askedAfter := make(chan struct{}), make(chan struct{})
	d := testDeps(t, session.Options{Loader: loader, Environ: []string{}, Memo: true,
		Watcher: &gatedWatcher{svc: svc, gate: gate, askedAfter: askedAfter}})
	defer d.Session.Close()

	raw, _ := json.Marshal(map[string]any{"tasks": []string{"build"}})
	out, err := d.planTasks().Call(ctx, &tool.Call{Args: raw})
	if err != nil {
		t.Fatal(err)
	}
	var ans PlanAnswer
	if err := json.Unmarshal(out, &ans); err != nil || ans.ExitCode != 0 || ans.Counts[store.StatusHit] != 2 {
		t.Fatalf("planTasks before the watcher was ready: %v %s", err, out)
	}
	close(gate)
	select {
	case <-askedAfter: // the background plan asked for the watcher's file state: it plans
	case <-time.After(time.Minute):
		t.Fatal("no plan asked for the watcher's file state once it was ready")
	}
	loaded, err := d.load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	handed := d.handoff(ctx, loaded, &runTasksArgs{taskSelectionArgs: taskSelectionArgs{Tasks: []string{"build"}}})
	if handed == nil || handed.Index == nil {
		t.Fatalf("the hand-off after the watcher was ready carried no index: %+v", handed)
	}
	want, err := runrequest.PlanDocument(ctx, ws, req)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range want.Tasks {
		if handed.Keys[task.TaskID] != task.Hash {
			t.Fatalf("%s: the memo's key %q, a scan's %q", task.TaskID, handed.Keys[task.TaskID], task.Hash)
		}
		if _, ok := handed.Index.Entries[task.Hash]; !ok {
			t.Fatalf("%s: the memo handed no entry of the hit (it knew %v)", task.TaskID, slices.Collect(maps.Keys(handed.Index.Entries)))
		}
	}
}

// gatedWatcher is the watcher of svc that answers nothing until gate is closed, as one still
// taking its first look; askedAfter is closed on the first snapshot asked for after.
type gatedWatcher struct {
	svc        *watch.Service
	gate       chan struct{}
	askedAfter chan struct{}
	once       sync.Once
}

func (g *gatedWatcher) Update(ws *graph.Workspace) {}

func (g *gatedWatcher) Snapshot(ctx context.Context) (*filestate.Snapshot, error) {
	select {
	case <-g.gate:
	default:
		return nil, errors.New("not yet")
	}
	g.once.Do(func() { close(g.askedAfter) })
	return g.svc.Snapshot(ctx)
}

func (g *gatedWatcher) WaitHashed(ctx context.Context) error {
	select {
	case <-g.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.svc.Watcher().WaitReady(ctx)
}

func (g *gatedWatcher) Close() error { return nil }
