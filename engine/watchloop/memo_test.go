package watchloop

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/handoff"
	"github.com/vzn/vx/engine/planmemo"
	"github.com/vzn/vx/engine/resources"
	"github.com/vzn/vx/engine/runner"
	"github.com/vzn/vx/engine/runrequest"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/watch"
	"github.com/vzn/vx/engine/workspace"
	"github.com/vzn/vx/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// memoWorkspace: a chain of projects, a task with an input outside its project, a global input.
var memoWorkspace = map[string]string{
	"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({
  projects: ['packages/*'],
  globalInputs: ['tools/version.txt'],
  tasks: {
    build: { command: 'mkdir -p dist && cat src/*.js > dist/out.js', dependsOn: ['^build'], inputs: ['src/**'], outputs: ['dist/**'] },
    test: { command: 'true', dependsOn: ['build'] },
    lint: { command: 'true', inputs: ['src/**', '//config/**'] },
  },
})
`,
	".gitignore":              "dist/\n.vx/\n",
	"package.json":            `{"name": "root", "private": true}`,
	"tools/version.txt":       "1\n",
	"config/rules.json":       "{}\n",
	"packages/a/package.json": `{"name": "a"}`,
	"packages/a/src/a.js":     "a\n",
	"packages/b/package.json": `{"name": "b", "dependencies": {"a": "*"}}`,
	"packages/b/src/b.js":     "b\n",
	"packages/b/README.md":    "b\n",
	"packages/c/package.json": `{"name": "c", "dependencies": {"b": "*"}}`,
	"packages/c/src/c.js":     "c\n",
}

// watchedMemoWorkspace writes memoWorkspace and commits it, and answers its root, a loader, the
// workspace loaded and a watcher over it that has taken its first look.
func watchedMemoWorkspace(t *testing.T) (string, *workspace.Loader, *graph.Workspace, *watch.Service) {
	t.Helper()
	return watchedWorkspaceOf(t, memoWorkspace)
}

// watchedWorkspaceOf is watchedMemoWorkspace of the workspace files.
func watchedWorkspaceOf(t *testing.T, files map[string]string) (string, *workspace.Loader, *graph.Workspace, *watch.Service) {
	t.Helper()
	root := testkit.TempRepo(t, files)
	ctx := context.Background()
	loader := workspace.NewLoader(workspace.Options{Dir: root, Getenv: func(string) string { return "" }})
	ws, err := loader.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := watch.Serve(ws.Root, ws.CacheDir, ws, func(msg string) { t.Log(msg) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	if err := svc.Watcher().WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return root, loader, ws, svc
}

// planKeys answers the hand-off runner.PlanKeys makes for req.
func planKeys(t *testing.T, ws *graph.Workspace, req runrequest.Request) *handoff.Handoff {
	t.Helper()
	opts, err := runrequest.Prepare(context.Background(), ws, req)
	if err != nil {
		t.Fatal(err)
	}
	handed, err := runner.PlanKeys(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return handed
}

// memoRequest answers req over the watcher's file state as it is now, through memo.
func memoRequest(t *testing.T, svc *watch.Service, req runrequest.Request, memo *planmemo.Memo) runrequest.Request {
	t.Helper()
	snap, err := svc.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	req.Files, req.Memo = snap, memo
	return req
}

// After a run wrote the index, the memo no longer knows what the cache holds, and a hand-off
// would hand no index; a refresh (as runTasks starts once its run ended) reads it again in the
// background, and the next plan waits for it: the hand-off after it hands the index, which is
// the index's.
func TestMemoRefreshAfterARun(t *testing.T) {
	_, _, ws, svc := watchedMemoWorkspace(t)
	ctx := context.Background()
	memo := planmemo.NewMemo()
	defer memo.Close()
	req := runrequest.Request{SelectOptions: workspace.SelectOptions{Tasks: []string{"build", "test"}}, Getenv: func(string) string { return "" }}
	withMemo := func() runrequest.Request { return memoRequest(t, svc, req, memo) }
	plan := func(ctx context.Context) {
		if _, err := runrequest.PlanDocument(ctx, ws, withMemo()); err != nil {
			t.Error(err)
		}
	}
	opts, err := runrequest.Prepare(ctx, ws, req)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		if sum, err := runner.Run(ctx, opts.Options); err != nil || !sum.OK {
			t.Fatalf("run: %v %+v", err, sum)
		}
		want, err := runrequest.PlanDocument(ctx, ws, req)
		if err != nil {
			t.Fatal(err)
		}
		if checkHandedIndex(t, "after a run", ws, withMemo(), want) {
			t.Fatalf("round %d: the memo handed the index its run moved", round)
		}
		memo.Refresh(ctx, nil, plan)
		if !checkHandedIndex(t, "after a refresh", ws, withMemo(), want) {
			t.Fatalf("round %d: no index handed after the refresh", round)
		}
	}
}

// TestMemoNeverStale plans after every kind of edit twice — through the memo over the watcher's
// snapshot, and by a scan with no memo — and requires the same keys and cache statuses; what the
// memo would hand a runTasks child of the index must be what the index holds.
func TestMemoNeverStale(t *testing.T) {
	root, loader, ws, svc := watchedMemoWorkspace(t)
	ctx := context.Background()
	memo := planmemo.NewMemo()
	defer memo.Close()
	req := runrequest.Request{SelectOptions: workspace.SelectOptions{Tasks: []string{"build", "test", "lint"}}, Getenv: func(string) string { return "" }}
	var handed int
	compare := func(step string) {
		t.Helper()
		ws, err := loader.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		snap, err := svc.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		withMemo := req
		withMemo.Files, withMemo.Memo = snap, memo
		want, err := runrequest.PlanDocument(ctx, ws, req)
		if err != nil {
			t.Fatal(err)
		}
		// Before the memo's plan, it still knows what it read before the step.
		if checkHandedIndex(t, step+" (before a plan)", ws, withMemo, want) {
			handed++
		}
		got, err := runrequest.PlanDocument(ctx, ws, withMemo)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range want.Tasks {
			g := got.Tasks[i]
			if g.TaskID != w.TaskID || g.Hash != w.Hash || g.Cache != w.Cache {
				t.Fatalf("%s: %s planned %s %s through the memo, %s %s by a scan", step, w.TaskID, g.Hash[:12], g.Cache, w.Hash[:12], w.Cache)
			}
		}
		if checkHandedIndex(t, step, ws, withMemo, want) {
			handed++
		}
	}
	run := func() {
		t.Helper()
		opts, err := runrequest.Prepare(ctx, ws, req)
		if err != nil {
			t.Fatal(err)
		}
		if sum, err := runner.Run(ctx, opts.Options); err != nil || !sum.OK {
			t.Fatalf("run: %v %+v", err, sum)
		}
	}
	write := func(rel, text string) { testkit.WriteTree(t, root, map[string]string{rel: text}) }
	compare("first plan")
	compare("nothing changed")
	run()
	compare("after a run (hits)")
	for _, step := range []struct {
		name string
		do   func()
	}{
		{"a source edit", func() { write("packages/b/src/b.js", "b2\n") }},
		{"a new source file", func() { write("packages/a/src/more.js", "more\n") }},
		{"a file outside the inputs", func() { write("packages/b/README.md", "b2\n") }},
		{"an outside input", func() { write("config/rules.json", `{"x": 1}`) }},
		{"a global input", func() { write("tools/version.txt", "2\n") }},
		{"a root file", func() { write("package.json", `{"name": "root", "private": true, "x": 1}`) }},
		{"an ignored output", func() { write("packages/c/dist/out.js", "stale\n") }},
		{"a deleted source", func() { os.Remove(filepath.Join(root, "packages/a/src/more.js")) }},
		{"a run", run},
		{"an edit back", func() { write("packages/b/src/b.js", "b\n") }},
		{"an entry pruned", func() {
			st, err := store.Open(ctx, ws.CacheDir, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			entries, err := st.Entries(ctx, store.EntryQuery{})
			if err != nil || len(entries) == 0 {
				t.Fatalf("entries: %v %d", err, len(entries))
			}
			if err := st.DeleteEntries(ctx, []string{entries[0].Hash}); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		step.do()
		time.Sleep(10 * time.Millisecond) // a stat's mtime tick, so that a scan sees the edit too
		compare(step.name)
	}
	if handed == 0 {
		t.Error("the memo never knew the index for a hand-off, not even when nothing changed")
	}
}

// checkHandedIndex plans the keys of req through its memo, as runTasks does for its child, and
// requires what the memo hands of the index (when it hands it) to be what the index holds: an
// entry for each hit of want (a scan's plan), each entry the index's, each task's recent command
// runs the index's. It reports whether the memo handed it.
func checkHandedIndex(t *testing.T, step string, ws *graph.Workspace, req runrequest.Request, want *runner.Plan) bool {
	t.Helper()
	ctx := context.Background()
	handed := planKeys(t, ws, req)
	index := handed.Index
	if index == nil {
		return false
	}
	st, err := store.OpenReadOnly(ctx, ws.CacheDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.RecentCommandRuns(ctx, slices.Sorted(maps.Keys(handed.Keys)), resources.EstimateWindow)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range want.Tasks {
		e, handed := index.Entries[task.Hash]
		if handed != (task.Cache == store.StatusHit) {
			t.Fatalf("%s: %s is a %s, and the memo handed an entry: %v", step, task.TaskID, task.Cache, handed)
		}
		if handed {
			in, ok, err := st.Entry(ctx, task.Hash)
			if err != nil || !ok || !reflect.DeepEqual(in, e) {
				t.Fatalf("%s: %s: the memo handed the entry %+v, the index holds %+v (%v)", step, task.TaskID, e, in, err)
			}
		}
		if !slices.Equal(index.Runs[task.TaskID], runs[task.TaskID]) {
			t.Fatalf("%s: %s: the memo handed the runs %v, the index holds %v", step, task.TaskID, index.Runs[task.TaskID], runs[task.TaskID])
		}
	}
	return true
}

// An edit planned and then undone (the agent's try, taken back) gives a task its key of before
// the edit, which the memo's last plan did not look up: the hand-off reads what it does not know
// of the index from the memo's own, rather than handing none, which had the child read every
// entry again; what it hands is the index's, and the memo keeps it for the next.
func TestMemoHandsTheIndexAfterAnEditUndone(t *testing.T) {
	root, _, ws, svc := watchedMemoWorkspace(t)
	ctx := context.Background()
	memo := planmemo.NewMemo()
	defer memo.Close()
	req := runrequest.Request{SelectOptions: workspace.SelectOptions{Tasks: []string{"build", "test"}}, Getenv: func(string) string { return "" }}
	opts, err := runrequest.Prepare(ctx, ws, req)
	if err != nil {
		t.Fatal(err)
	}
	if sum, err := runner.Run(ctx, opts.Options); err != nil || !sum.OK {
		t.Fatalf("run: %v %+v", err, sum)
	}
	withMemo := func() runrequest.Request { return memoRequest(t, svc, req, memo) }
	want, err := runrequest.PlanDocument(ctx, ws, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runrequest.PlanDocument(ctx, ws, withMemo()); err != nil {
		t.Fatal(err)
	}
	write := func(text string) {
		testkit.WriteTree(t, root, map[string]string{"packages/c/src/c.js": text})
		time.Sleep(10 * time.Millisecond) // a stat's mtime tick
	}
	write("c2\n")
	edited, err := runrequest.PlanDocument(ctx, ws, withMemo())
	if err != nil {
		t.Fatal(err)
	}
	if edited.Totals.Misses <= want.Totals.Misses {
		t.Fatalf("the edit planned no miss: %+v", edited.Totals)
	}
	write("c\n")
	if !checkHandedIndex(t, "an edit undone", ws, withMemo(), want) {
		t.Fatal("the memo handed no index for the keys of before the edit")
	}
	// What it read is kept: the memo alone answers the next hand-off.
	if !checkHandedIndex(t, "again", ws, withMemo(), want) {
		t.Fatal("the memo handed no index the second time")
	}
}

// The memo vouches for a hit's outputs (Handoff.Intact) only while the watcher sees them as the
// entry lists them: an output changed (in the outputs' folder or one under it), a file added
// beside them or in a new folder under them, or their folder removed, and the task's hit is no
// longer vouched for; its content put back, it is again.
func TestMemoVouchesOnlyForOutputsInPlace(t *testing.T) {
	files := maps.Clone(memoWorkspace)
	files["vx.workspace.ts"] = strings.Replace(files["vx.workspace.ts"], "cat src/*.js > dist/out.js'",
		"cat src/*.js > dist/out.js && mkdir -p dist/deep && cp dist/out.js dist/deep/copy.js'", 1)
	root, _, ws, svc := watchedWorkspaceOf(t, files)
	ctx := context.Background()
	memo := planmemo.NewMemo()
	defer memo.Close()
	req := runrequest.Request{SelectOptions: workspace.SelectOptions{Tasks: []string{"build"}}, Getenv: func(string) string { return "" }}
	opts, err := runrequest.Prepare(ctx, ws, req)
	if err != nil {
		t.Fatal(err)
	}
	if sum, err := runner.Run(ctx, opts.Options); err != nil || !sum.OK {
		t.Fatalf("run: %v %+v", err, sum)
	}
	intact := func() string {
		t.Helper()
		r := memoRequest(t, svc, req, memo)
		if _, err := runrequest.PlanDocument(ctx, ws, r); err != nil {
			t.Fatal(err)
		}
		handed := planKeys(t, ws, r)
		ids := slices.Sorted(maps.Keys(handed.Intact))
		for _, id := range ids {
			if handed.Intact[id].Files != 2 {
				t.Errorf("%s: %d files listed, want 2", id, handed.Intact[id].Files)
			}
		}
		return strings.Join(ids, " ")
	}
	check := func(step, want string) {
		t.Helper()
		time.Sleep(10 * time.Millisecond) // a stat's mtime tick
		if got := intact(); got != want {
			t.Fatalf("%s: vouched for %q, want %q", step, got, want)
		}
	}
	// The run closed the index as its last connection: the memo's first open moves its WAL, and
	// the plan after that one knows the index (a server holds it open all along).
	intact()
	all := "a#build b#build c#build"
	check("built", all)
	check("again, from the memo", all)
	testkit.WriteTree(t, root, map[string]string{"packages/b/dist/out.js": "x\n"})
	check("b's output changed", "a#build c#build")
	testkit.WriteTree(t, root, map[string]string{"packages/b/dist/out.js": "b\n"})
	check("b's output put back", all)
	testkit.WriteTree(t, root, map[string]string{"packages/c/dist/deep/copy.js": "x\n"})
	check("c's output under a folder of its outputs changed", "a#build b#build")
	testkit.WriteTree(t, root, map[string]string{"packages/c/dist/deep/copy.js": "c\n"})
	check("c's put back", all)
	testkit.WriteTree(t, root, map[string]string{"packages/c/dist/extra.js": "extra\n"})
	check("a file beside c's output", "a#build b#build")
	testkit.WriteTree(t, root, map[string]string{"packages/b/dist/sub/new.js": "new\n"})
	check("a new folder under b's outputs", "a#build")
	if err := os.RemoveAll(filepath.Join(root, "packages/a/dist")); err != nil {
		t.Fatal(err)
	}
	check("a's outputs removed", "")
	for _, p := range []string{"packages/b/dist/sub", "packages/c/dist/extra.js"} {
		if err := os.RemoveAll(filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	check("b's and c's strays removed", "b#build c#build")
}
