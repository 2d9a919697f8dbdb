package main

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/handoff"
	"github.com/vzn/vx/engine/planmemo"
	"github.com/vzn/vx/engine/runner"
	"github.com/vzn/vx/engine/runrequest"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/watch"
	"github.com/vzn/vx/engine/workspace"
)

// handoffWorkspace is watchWorkspace's chain a → b → c and d, built and committed, with the
// snapshot of a watcher over it and the environment a child vx run starts with.
type handoffWorkspace struct {
	dir     string
	env     []string
	ws      *graph.Workspace
	snap    *filestate.Snapshot
	svc     *watch.Service
	taskIDs []string
}

func newHandoffWorkspace(t *testing.T) *handoffWorkspace {
	t.Helper()
	dir := writeWorkspace(t, watchWorkspace())
	gitInit(t, dir)
	h := &handoffWorkspace{dir: dir, env: append(vxCommand(t, dir).Env, "LOG="+t.TempDir())}
	h.run(t, nil, "")
	h.watch(t)
	return h
}

// watch loads the workspace, starts a watcher over it and takes its file state once it has one,
// and selects build's tasks.
func (h *handoffWorkspace) watch(t *testing.T) {
	t.Helper()
	getenv := h.getenv()
	ws, err := workspace.NewLoader(workspace.Options{Dir: h.dir, Getenv: getenv, Console: io.Discard, Version: version}).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	h.ws = ws
	svc, err := watch.Serve(h.dir, ws.CacheDir, ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	h.svc = svc
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if h.snap, err = svc.Snapshot(context.Background()); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	opts, err := runrequest.Prepare(context.Background(), ws, runrequest.Request{
		SelectOptions: workspace.SelectOptions{Tasks: []string{"build"}}, Getenv: getenv, Files: h.snap})
	if err != nil {
		t.Fatal(err)
	}
	h.taskIDs = opts.TaskIDs
}

func (h *handoffWorkspace) getenv() func(string) string {
	vars := map[string]string{}
	for _, kv := range h.env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	return func(k string) string { return vars[k] }
}

// keys answers the keys a server would hand over: planned from the snapshot.
func (h *handoffWorkspace) keys(t *testing.T) map[string]string {
	t.Helper()
	opts, err := runrequest.Prepare(context.Background(), h.ws, runrequest.Request{
		SelectOptions: workspace.SelectOptions{Tasks: []string{"build"}}, Getenv: h.getenv(), Files: h.snap})
	if err != nil {
		t.Fatal(err)
	}
	handed, err := runner.PlanKeys(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return handed.Keys
}

// planned answers the keys and what of the index a server would hand over once it planned the
// selection (planTasks): its memo then knows the entries of the hits and the tasks' recent runs.
func (h *handoffWorkspace) planned(t *testing.T) (map[string]string, *handoff.Index) {
	t.Helper()
	memo := planmemo.NewMemo()
	defer memo.Close()
	req := runrequest.Request{SelectOptions: workspace.SelectOptions{Tasks: []string{"build"}}, Getenv: h.getenv(), Files: h.snap, Memo: memo}
	opts, err := runrequest.Prepare(context.Background(), h.ws, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runner.DryRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if opts, err = runrequest.Prepare(context.Background(), h.ws, req); err != nil {
		t.Fatal(err)
	}
	handed, err := runner.PlanKeys(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	keys, index := handed.Keys, handed.Index
	if index == nil {
		t.Fatal("a memo that just planned the workspace handed nothing of the index")
	}
	return keys, index
}

// handedRun is what a `vx run build` child said: its summary's statuses and hashes, its stderr,
// and how many tasks it hashed (its profile's hash spans).
type handedRun struct {
	status, hash map[string]string
	restored     map[string]*int
	stderr       string
	hashed       int
}

// run runs `vx run build` as runTasks' child, ordered as vx mcp orders it and handed h over
// with its order's key (none when nil), and answers it; the run must succeed.
func (h *handoffWorkspace) run(t *testing.T, given *handoff.Handoff, stamp string) handedRun {
	t.Helper()
	return h.runAs(t, given, stamp, ordered)
}

// How a test's child gets its hand-off: as vx mcp's, with its order's key; ordered, with another
// key; or from any process that starts `vx run --handoff-fd 3`.
const (
	ordered = iota
	orderedWrongKey
	unordered
)

// runAs runs `vx run build` handed h over as how says (nothing when h is nil), and answers it;
// the run must succeed.
func (h *handoffWorkspace) runAs(t *testing.T, given *handoff.Handoff, stamp string, how int) handedRun {
	t.Helper()
	profile := filepath.Join(t.TempDir(), "profile.json")
	args := []string{"run", "build", "--format", "json", "--log-level", "debug", "--profile", profile}
	if given != nil {
		args = append(args, "--handoff-fd", "3")
	}
	cmd := vxCommand(t, h.dir, args...)
	if given != nil && how != unordered {
		cmd = vxCommand(t, h.dir, handoff.AwaitRunArg, "4")
	}
	cmd.Env = h.env
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	var w, orderW *os.File
	if given != nil {
		r, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		cmd.ExtraFiles, w = []*os.File{r}, pw
		if how != unordered {
			or, ow, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer or.Close()
			cmd.ExtraFiles, orderW = append(cmd.ExtraFiles, or), ow
		}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, f := range cmd.ExtraFiles {
		f.Close()
	}
	if orderW != nil {
		order, err := json.Marshal(handoff.Order{Args: args, Key: "the order's key"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := orderW.Write(order); err != nil {
			t.Fatal(err)
		}
		orderW.Close()
	}
	if w != nil {
		if stamp != "" {
			given.Stamp = stamp
		}
		given.Key = "the order's key"
		if how == orderedWrongKey {
			given.Key = "another key"
		}
		// An empty hand-off is a server that died before it wrote one.
		if given.Files != nil || given.Keys != nil {
			if err := handoff.Write(w, given); err != nil {
				t.Errorf("write the hand-off: %v", err)
			}
		}
		w.Close()
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("vx run: %v\n%s", err, errOut.String())
	}
	var sum struct {
		Tasks []struct {
			TaskID, Status, Hash string
			RestoredFiles        *int
		}
	}
	if err := json.Unmarshal([]byte(out.String()), &sum); err != nil {
		t.Fatalf("the summary: %v\n%s", err, out.String())
	}
	got := handedRun{status: map[string]string{}, hash: map[string]string{}, restored: map[string]*int{}, stderr: errOut.String()}
	for _, task := range sum.Tasks {
		got.status[task.TaskID], got.hash[task.TaskID], got.restored[task.TaskID] = task.Status, task.Hash, task.RestoredFiles
	}
	trace, err := os.ReadFile(profile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct{ Name string } `json:"traceEvents"`
	}
	if err := json.Unmarshal(trace, &doc); err != nil {
		t.Fatal(err)
	}
	for _, ev := range doc.TraceEvents {
		if ev.Name == "hash" {
			got.hashed++
		}
	}
	return got
}

// A runTasks child takes the file state and the keys handed over, hashing nothing, when its
// workspace, tasks and environment make the hand-off's stamp; the summary is the one hashing
// gives.
func TestRunTakesTheHandedKeys(t *testing.T) {
	t.Parallel()
	h := newHandoffWorkspace(t)
	scanned := h.run(t, nil, "")
	keys := h.keys(t)
	handed := h.run(t, &handoff.Handoff{Files: h.snap, Stamp: handoff.Stamp(h.ws, h.taskIDs, h.env), Known: handoff.Known{Keys: keys}}, "")
	if !strings.Contains(handed.stderr, "file state: handed over") || !strings.Contains(handed.stderr, "taking the keys handed over") {
		t.Fatalf("the child did not take the hand-off:\n%s", handed.stderr)
	}
	if handed.hashed != 0 {
		t.Errorf("the child hashed %d tasks, want none", handed.hashed)
	}
	if scanned.hashed != len(h.taskIDs) {
		t.Errorf("without a hand-off the child hashed %d tasks, want %d", scanned.hashed, len(h.taskIDs))
	}
	for _, id := range h.taskIDs {
		if handed.status[id] != "hit" || handed.hash[id] != scanned.hash[id] || keys[id] != scanned.hash[id] {
			t.Errorf("%s: %s %s handed, %s %s hashed (handed key %s)", id, handed.status[id], handed.hash[id], scanned.status[id], scanned.hash[id], keys[id])
		}
	}
}

// A runTasks child takes the entries the server handed over while the state folder stamps as the
// server read it, and reads the index itself once anything wrote to it. Here the entry handed for
// a#build is d#build's: taken, a's hit restores d's output into a.
func TestRunTakesTheHandedIndex(t *testing.T) {
	t.Parallel()
	h := newHandoffWorkspace(t)
	stamp := handoff.Stamp(h.ws, h.taskIDs, h.env)
	output := filepath.Join(h.dir, "packages/a/dist/out.js")
	swapped := func() *handoff.Handoff {
		keys, index := h.planned(t)
		e, ok := index.Entries[keys["d#build"]]
		if !ok {
			t.Fatalf("no entry handed for d#build's key: %v", index.Entries)
		}
		e.Hash = keys["a#build"]
		index.Entries[keys["a#build"]] = e
		return &handoff.Handoff{Files: h.snap, Stamp: stamp, Known: handoff.Known{Keys: keys, Index: index}}
	}

	given := swapped()
	got := h.run(t, given, "")
	if !strings.Contains(got.stderr, `"index":true`) {
		t.Fatalf("the child was handed no index:\n%s", got.stderr)
	}
	if text, err := os.ReadFile(output); err != nil || string(text) != "export const d = 1\n" {
		t.Fatalf("a#build restored %q (%v), want d's output from the handed entry", text, err)
	}

	h.run(t, nil, "") // a's own output again
	given = swapped()
	h.run(t, nil, "") // a run records itself: the index moved since the server read it
	if got = h.run(t, given, ""); got.status["a#build"] != "hit" {
		t.Fatalf("a#build: %s", got.status["a#build"])
	}
	if text, err := os.ReadFile(output); err != nil || string(text) != "export const a = 1\n" {
		t.Fatalf("a#build restored %q (%v) after the index moved, want its own output", text, err)
	}
}

// handedPlan answers the hand-off a server would make once it planned the selection: the keys,
// the index, and the hits whose outputs are in place in the watcher's file state, which it then
// leaves out.
func (h *handoffWorkspace) handedPlan(t *testing.T) *handoff.Handoff {
	t.Helper()
	memo := planmemo.NewMemo()
	defer memo.Close()
	req := runrequest.Request{SelectOptions: workspace.SelectOptions{Tasks: []string{"build"}}, Getenv: h.getenv(), Files: h.snap, Memo: memo}
	for range 2 { // a plan, then the hand-off
		opts, err := runrequest.Prepare(context.Background(), h.ws, req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := runner.DryRun(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
	}
	opts, err := runrequest.Prepare(context.Background(), h.ws, req)
	if err != nil {
		t.Fatal(err)
	}
	handed, err := runner.PlanKeys(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	handed.Stamp = handoff.Stamp(h.ws, h.taskIDs, h.env)
	return handed
}

// A hand-off without a file state, every task a hit whose outputs the server found in place, is
// run as it says while the outputs are as the server saw them: each hit restores nothing (the
// output's file is the one it was) and says how many files its entry lists, and the child never
// asks for a file state.
func TestRunTakesTheIntactHits(t *testing.T) {
	t.Parallel()
	h := newHandoffWorkspace(t)
	given := h.handedPlan(t)
	if len(given.Intact) != len(h.taskIDs) {
		t.Fatalf("the server found %d of %d hits in place: %v", len(given.Intact), len(h.taskIDs), given.Intact)
	}
	output := filepath.Join(h.dir, "packages/a/dist/out.js")
	before, err := os.Lstat(output)
	if err != nil {
		t.Fatal(err)
	}
	got := h.run(t, given, "")
	if !strings.Contains(got.stderr, "keys handed over, no file state") || strings.Contains(got.stderr, "asked for after all") {
		t.Fatalf("the child did not run on the hand-off alone:\n%s", got.stderr)
	}
	if after, err := os.Lstat(output); err != nil || !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("a#build wrote %s, which the hand-off said was in place (%v)", output, err)
	}
	for _, id := range h.taskIDs {
		if got.status[id] != "hit" || got.restored[id] == nil || *got.restored[id] != 1 || got.hashed != 0 {
			t.Errorf("%s: %s, restored %v, %d hashed; want a hit of its 1 file, none hashed", id, got.status[id], got.restored[id], got.hashed)
		}
	}
}

// An output edited, removed or added after the server found a hit's outputs in place, before
// the child runs, is restored as the entry holds it: the child checks each such hit's outputs
// against what the server saw, and, finding one moved, takes nothing of the hand-off and scans.
func TestRunRestoresOutputsChangedAfterTheVerdict(t *testing.T) {
	t.Parallel()
	dist := func(h *handoffWorkspace, name string) string { return filepath.Join(h.dir, "packages/a/dist", name) }
	for _, tc := range []struct {
		name   string
		change func(h *handoffWorkspace) error
	}{
		{"edited", func(h *handoffWorkspace) error {
			return os.WriteFile(dist(h, "out.js"), []byte("export const a = 2\n"), 0o644)
		}},
		{"removed", func(h *handoffWorkspace) error { return os.Remove(dist(h, "out.js")) }},
		{"added", func(h *handoffWorkspace) error { return os.WriteFile(dist(h, "extra.js"), []byte("stale\n"), 0o644) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHandoffWorkspace(t)
			given := h.handedPlan(t)
			if _, ok := given.Intact["a#build"]; !ok {
				t.Fatalf("the server did not find a#build's outputs in place: %v", given.Intact)
			}
			if err := tc.change(h); err != nil {
				t.Fatal(err)
			}
			got := h.run(t, given, "")
			if !strings.Contains(got.stderr, "outputs changed since vx mcp found them in place") {
				t.Errorf("the child did not see a#build's outputs change:\n%s", got.stderr)
			}
			if text, err := os.ReadFile(dist(h, "out.js")); err != nil || string(text) != "export const a = 1\n" {
				t.Errorf("a#build left %q (%v) under a %s, want its entry's output", text, err, got.status["a#build"])
			}
			if _, err := os.Lstat(dist(h, "extra.js")); err == nil {
				t.Errorf("a#build left a file its entry does not list under a %s", got.status["a#build"])
			}
			if got.status["a#build"] != "hit" {
				t.Errorf("a#build: %s, want a hit", got.status["a#build"])
			}
		})
	}
}

// A hand-off that says a hit is in place with another outputs blob than its entry's is not
// taken for that hit: the child reads the entry (handed without its listing) from the index and
// restores it as any hit, asking for the file state it was not handed.
func TestRunChecksTheIntactHits(t *testing.T) {
	t.Parallel()
	h := newHandoffWorkspace(t)
	given := h.handedPlan(t)
	hit := given.Intact["a#build"]
	hit.Blob = strings.Repeat("0", 64)
	given.Intact["a#build"] = hit
	output := filepath.Join(h.dir, "packages/a/dist/out.js")
	got := h.run(t, given, "")
	if !strings.Contains(got.stderr, "asked for after all") {
		t.Errorf("the child never asked for a file state:\n%s", got.stderr)
	}
	if text, err := os.ReadFile(output); err != nil || string(text) != "export const a = 1\n" {
		t.Fatalf("a#build restored %q (%v), want its output", text, err)
	}
	for _, id := range h.taskIDs {
		if got.status[id] != "hit" || got.restored[id] == nil || *got.restored[id] != 1 {
			t.Errorf("%s: %s, restored %v; want a hit of its 1 file", id, got.status[id], got.restored[id])
		}
	}
}

// A hand-off that does not come from the vx mcp that ordered the run is refused by name, and the
// run hashes every task as a plain vx run: here keys of d#build's older inputs, which a run that
// took them would restore d's older output with. A same-user process that starts
// `vx run --handoff-fd` itself has no order; one ordered with another key than its hand-off's
// is refused alike.
func TestRunRefusesAForgedHandOff(t *testing.T) {
	t.Parallel()
	h := newHandoffWorkspace(t)
	// Every run scans: the test's own watcher may not have seen the edit below yet.
	h.env = append(h.env, "VX_FILE_STATE=scan")
	old := h.keys(t)
	src, output := filepath.Join(h.dir, "packages/d/src/index.js"), filepath.Join(h.dir, "packages/d/dist/out.js")
	if err := os.WriteFile(src, []byte("export const d = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := h.run(t, nil, "")
	stamp := handoff.Stamp(h.ws, h.taskIDs, h.env)
	for _, how := range []int{unordered, orderedWrongKey} {
		forged := &handoff.Handoff{Root: h.ws.Root, StateDir: h.ws.CacheDir, Stamp: stamp, Known: handoff.Known{Keys: maps.Clone(old)}}
		got := h.runAs(t, forged, "", how)
		if !strings.Contains(got.stderr, "vx: --handoff-fd: refused the hand-off: ") || strings.Contains(got.stderr, "taking the keys handed over") {
			t.Errorf("how %d: the forged hand-off was not refused:\n%s", how, got.stderr)
		}
		if text, err := os.ReadFile(output); err != nil || string(text) != "export const d = 2\n" {
			t.Fatalf("how %d: d#build restored %q (%v), want the output of its inputs", how, text, err)
		}
		if got.hashed != len(h.taskIDs) || got.status["d#build"] != "hit" || got.hash["d#build"] != now.hash["d#build"] {
			t.Errorf("how %d: hashed %d, d#build %s %s; want %d hashed and a hit under %s", how, got.hashed,
				got.status["d#build"], got.hash["d#build"], len(h.taskIDs), now.hash["d#build"])
		}
	}
}

// A hand-off whose stamp is not the child's (another environment) hands over the file state
// alone: the child hashes every task.
func TestRunHashesUnderAnotherStamp(t *testing.T) {
	t.Parallel()
	h := newHandoffWorkspace(t)
	other := handoff.Stamp(h.ws, h.taskIDs, append(h.env, "SOME_FLAG=1"))
	got := h.run(t, &handoff.Handoff{Files: h.snap, Known: handoff.Known{Keys: h.keys(t)}}, other)
	if !strings.Contains(got.stderr, "file state: handed over") || !strings.Contains(got.stderr, "of another config, selection or environment: hashing") {
		t.Fatalf("the child did not refuse the keys:\n%s", got.stderr)
	}
	if got.hashed != len(h.taskIDs) {
		t.Errorf("the child hashed %d tasks, want %d", got.hashed, len(h.taskIDs))
	}
}

// A handed key that is not the task's (here d#build's, which then misses and would run) is found
// out by the manifest the task makes before running: the task hits under its true key, the run
// says so once and hashes every task after it; a hit that writes files (a's outputs, removed) ends
// the taking of keys too.
func TestRunFindsAWrongHandedKey(t *testing.T) {
	t.Parallel()
	h := newHandoffWorkspace(t)
	keys := h.keys(t)
	truth := keys["d#build"]
	keys["d#build"] = strings.Repeat("0", 64)
	stamp := handoff.Stamp(h.ws, h.taskIDs, h.env)
	got := h.run(t, &handoff.Handoff{Files: h.snap, Stamp: stamp, Known: handoff.Known{Keys: keys}}, "")
	if !strings.Contains(got.stderr, "the key vx mcp handed over for d#build is not its files'") {
		t.Fatalf("no word of the wrong key:\n%s", got.stderr)
	}
	if got.status["d#build"] != "hit" || got.hash["d#build"] != truth {
		t.Errorf("d#build: %s %s, want a hit under %s", got.status["d#build"], got.hash["d#build"], truth)
	}
	if got.hashed == 0 {
		t.Errorf("the run hashed nothing after the wrong key")
	}

	if err := os.RemoveAll(filepath.Join(h.dir, "packages/a/dist")); err != nil {
		t.Fatal(err)
	}
	// As the server would: the watcher's file state once it saw the outputs go.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		snap, err := h.svc.Snapshot(context.Background())
		if err == nil && snap != h.snap {
			if _, err := snap.Lstat("packages/a/dist"); err != nil {
				h.snap = snap
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the watcher never saw packages/a/dist go")
		}
	}
	got = h.run(t, &handoff.Handoff{Files: h.snap, Stamp: stamp, Known: handoff.Known{Keys: h.keys(t)}}, "")
	for _, id := range []string{"a#build", "b#build", "c#build"} {
		if got.status[id] != "hit" {
			t.Errorf("%s: %s after a's outputs were removed, want a hit", id, got.status[id])
		}
	}
	// a's restore wrote its outputs: b and c, after it, hashed.
	if got.hashed < 2 {
		t.Errorf("after a hit that restored files, %d tasks hashed, want b's and c's at least", got.hashed)
	}
}

// A hand-off that never came (the pipe closed empty) leaves the child to ask the watcher or scan,
// as any vx run: it hashes every task and answers the same summary.
func TestRunWithoutTheHandOff(t *testing.T) {
	t.Parallel()
	h := newHandoffWorkspace(t)
	got := h.run(t, &handoff.Handoff{}, "")
	if !strings.Contains(got.stderr, "file state: no hand-off") {
		t.Fatalf("the child did not say it had no hand-off:\n%s", got.stderr)
	}
	if got.hashed != len(h.taskIDs) || got.status["c#build"] != "hit" {
		t.Errorf("hashed %d tasks, c#build %s; want %d and a hit", got.hashed, got.status["c#build"], len(h.taskIDs))
	}
}

// A remote hit under a handed key records its manifest (its entry was made elsewhere, so vx why
// has only this one to diff), made from the task's files.
func TestRunRecordsARemoteHitsManifest(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	artifacts := map[string][]byte{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.URL.Path, "/v8/artifacts/")
		mu.Lock()
		defer mu.Unlock()
		switch r.Method {
		case http.MethodPut:
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			artifacts[key] = body
			w.WriteHeader(http.StatusAccepted)
		case http.MethodGet:
			if body, ok := artifacts[key]; ok {
				_, _ = w.Write(body)
				return
			}
			http.NotFound(w, r)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	files := watchWorkspace()
	files["vx.workspace.ts"] = strings.Replace(files["vx.workspace.ts"], "passThroughEnv: ['LOG'],",
		"passThroughEnv: ['LOG'],\n  remoteCache: { url: 'http://127.0.0.1:9', protocol: 'turbo', team: 'team_vx', timeout: '5s' },", 1)
	dir := writeWorkspace(t, files)
	gitInit(t, dir)
	// The shared store in .vx/, so that forgetting .vx/ forgets the local cache.
	h := &handoffWorkspace{dir: dir, env: append(vxCommand(t, dir).Env, "LOG="+t.TempDir(),
		"VX_REMOTE_CACHE_URL="+srv.URL, "VX_REMOTE_CACHE_TOKEN=tok-handoff", "VX_CACHE_DIR=.vx")}
	h.run(t, nil, "")
	// The local cache forgotten, every hit is the server's.
	for _, p := range []string{".vx", "packages/a/dist"} {
		if err := os.RemoveAll(filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, ".vx"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.watch(t)
	got := h.run(t, &handoff.Handoff{Files: h.snap, Stamp: handoff.Stamp(h.ws, h.taskIDs, h.env), Known: handoff.Known{Keys: h.keys(t)}}, "")
	if got.status["d#build"] != "hit" || !strings.Contains(got.stderr, "taking the keys handed over") {
		t.Fatalf("d#build %s, want a remote hit under the handed key:\n%s", got.status["d#build"], got.stderr)
	}
	st, err := store.OpenReadOnly(context.Background(), filepath.Join(dir, ".vx"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, ok, err := st.Manifest(context.Background(), got.hash["d#build"]); err != nil || !ok {
		t.Errorf("no manifest recorded for d#build's remote hit (%v)", err)
	}
}
