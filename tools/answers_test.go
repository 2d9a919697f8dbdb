package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/engine/session"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/workspace"
	"github.com/vzn/vx/internal/testkit"
)

// fixedWorkspace is the small workspace the answer tests ask: two projects (b depends on a), each
// with build, test (after build) and a persistent dev server.
var fixedWorkspace = map[string]string{
	"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
import { mcp } from '@vzn/vx-mcp'
export default defineWorkspace({
  projects: ['packages/*'],
  plugins: [mcp()],
  tasks: {
    build: { command: 'echo built', dependsOn: ['^build'], inputs: ['src/**'], outputs: ['dist/**'] },
    test: { command: 'echo tested', dependsOn: ['build'] },
    dev: { command: 'sleep 100', persistent: true, cache: false },
  },
})
`,
	".gitignore":              ".vx/\ndist/\n",
	"package.json":            `{"name": "root", "private": true}`,
	"packages/a/package.json": `{"name": "a", "version": "1.0.0"}`,
	"packages/a/src/a.ts":     "export const a = 1\n",
	"packages/b/package.json": `{"name": "b", "version": "1.0.0", "dependencies": {"a": "1.0.0"}}`,
	"packages/b/src/b.ts":     "export const b = 1\n",
}

// fixedRun is one recorded execution of a seeded run.
type fixedRun struct {
	task   string
	status store.Status
	code   int
}

// answersDeps writes fixedWorkspace into a git repository, records runs (each a list of
// executions, oldest run first) straight into its index with a cache entry for every passed
// build, and answers the tools' dependencies over it and the run ids.
func answersDeps(t *testing.T, runs ...[]fixedRun) (*Deps, string, []string) {
	t.Helper()
	root := testkit.TempRepo(t, fixedWorkspace)
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(root, ".vx"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.Now().Add(-time.Hour)
	var ids []string
	for r, execs := range runs {
		at := start.Add(time.Duration(r) * time.Minute)
		id := store.NewRunID(at)
		ids = append(ids, id)
		if err := st.BeginRun(ctx, store.Run{ID: id, Started: at, TaskCount: len(execs)}); err != nil {
			t.Fatal(err)
		}
		var b store.Batch
		status := store.RunOK
		for i, x := range execs {
			project, name, _ := strings.Cut(x.task, "#")
			e := store.Execution{RunID: id, TaskID: x.task, Project: project, Task: name, Ord: i, Status: x.status,
				Started: at, Duration: time.Duration(10+i) * time.Millisecond, Hash: "key-" + x.task}
			switch x.status {
			case store.StatusBlocked, store.StatusSkipped:
				e.Hash, e.BlockedBy = "", "a#build"
			case store.StatusHit:
				e.CacheSource = "local"
			default:
				code := x.code
				e.ExitCode = &code
			}
			if x.status == store.StatusFailed {
				status = store.RunFailed
			}
			if x.status == store.StatusMiss && name == "build" {
				if err := st.PutEntry(ctx, store.Entry{Hash: e.Hash, TaskID: x.task, Project: project, Command: "echo built",
					Size: 6, Duration: e.Duration, Created: at, LastUsed: at}); err != nil {
					t.Fatal(err)
				}
			}
			b.Executions = append(b.Executions, e)
		}
		if err := st.Record(ctx, b); err != nil {
			t.Fatal(err)
		}
		if err := st.FinishRun(ctx, id, status, map[bool]int{true: 0, false: 1}[status == store.RunOK], at.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	d := testDeps(t, session.Options{Loader: workspace.NewLoader(workspace.Options{Dir: root, Getenv: func(string) string { return "" }})})
	return d, root, ids
}

// ask calls a tool with args (a JSON object) and answers its JSON, or its error.
func ask(t *testing.T, tl tool.Tool, args string) (string, error) {
	t.Helper()
	out, err := tl.Call(context.Background(), &tool.Call{Args: json.RawMessage(args)})
	return string(out), err
}

// answer calls a tool and decodes its answer into a map; an error fails the test.
func answer(t *testing.T, tl tool.Tool, args string) map[string]any {
	t.Helper()
	out, err := ask(t, tl, args)
	if err != nil {
		t.Fatalf("%s %s: %v", tl.Name, args, err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%s %s: %v: %s", tl.Name, args, err, out)
	}
	return m
}

// refused calls a tool and answers its refusal's text; an answer fails the test.
func refused(t *testing.T, tl tool.Tool, args string) string {
	t.Helper()
	out, err := ask(t, tl, args)
	if err == nil {
		t.Fatalf("%s %s answered %s, want a refusal", tl.Name, args, out)
	}
	return err.Error()
}

var firstBuild = []fixedRun{{"a#build", store.StatusMiss, 0}, {"b#build", store.StatusMiss, 0}}

// explainCacheKey on a task no one knows is refused with the nearest task ids, not answered
// found: false with a zero time; a known task without an entry is found: false, latestEntry null.
func TestExplainCacheKeyRefusesAnUnknownTask(t *testing.T) {
	d, _, _ := answersDeps(t, firstBuild)
	msg := refused(t, d.explainCacheKey(), `{"taskId":"a#buidl"}`)
	if !strings.Contains(msg, "no task is named a#buidl") || !strings.Contains(msg, "nearest: a#build") {
		t.Errorf("refusal: %s", msg)
	}
	got := answer(t, d.explainCacheKey(), `{"taskId":"a#test"}`)
	if got["found"] != false || got["latestEntry"] != nil || got["createdAt"] != nil || got["note"] == "" {
		t.Errorf("a known task without an entry: %v", got)
	}
	got = answer(t, d.explainCacheKey(), `{"taskId":"a#build"}`)
	entry, _ := got["latestEntry"].(map[string]any)
	if got["found"] != true || got["project"] != "a" || got["task"] != "build" || entry["hash"] != "key-a#build" || entry["command"] != "echo built" {
		t.Errorf("a task with an entry: %v", got)
	}
	if created, _ := entry["createdAt"].(float64); created < float64(time.Now().Add(-2*time.Hour).UnixMilli()) {
		t.Errorf("latestEntry.createdAt is not epoch milliseconds: %v", entry["createdAt"])
	}
}

// listTasks keeps a task's persistent flag, and answers each task's name and cached.
func TestListTasksKeepsPersistent(t *testing.T) {
	d, _, _ := answersDeps(t)
	out, err := ask(t, d.listTasks(), `{"project":"a"}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{"id":"a#dev","name":"dev","command":"sleep 100","dependsOn":[],"cache":false,"cached":false,"persistent":true}`,
		`{"id":"a#build","name":"build","command":"echo built","dependsOn":[],"cache":true,"cached":true}`} {
		if !strings.Contains(out, want) {
			t.Errorf("listTasks {project: a} lacks %s: %s", want, out)
		}
	}
}

// listTasks with project beside filter or affected is refused, not answered with no project.
func TestListTasksRefusesProjectWithASelection(t *testing.T) {
	d, _, _ := answersDeps(t)
	for _, args := range []string{`{"project":"a","filter":"b"}`, `{"project":"a","affected":true}`} {
		if msg := refused(t, d.listTasks(), args); !strings.Contains(msg, `"project" does not combine with filter or affected`) {
			t.Errorf("%s: %s", args, msg)
		}
	}
	// filter is a list, as runTasks and planTasks take it.
	got := answer(t, d.listTasks(), `{"filter":["a","b"]}`)
	if got["totalProjects"] != float64(2) {
		t.Errorf("listTasks {filter: [a, b]}: %v", got)
	}
}

// getCacheStats with scope {} is refused; "all" is the whole workspace, as the answer says it.
func TestCacheStatsRefusesAnEmptyScope(t *testing.T) {
	d, _, _ := answersDeps(t, firstBuild)
	for _, args := range []string{`{"scope":{}}`, `{"scope":"some"}`, `{"scope":{"project":""}}`} {
		if msg := refused(t, d.getCacheStats(), args); !strings.Contains(msg, "scope") {
			t.Errorf("%s: %s", args, msg)
		}
	}
	for _, args := range []string{`{}`, `{"scope":"all"}`} {
		got := answer(t, d.getCacheStats(), args)
		if got["scope"] != "all" || got["entryCount"] != float64(2) || got["runCountLast24h"] != float64(2) {
			t.Errorf("%s: %v", args, got)
		}
	}
}

// A task that was only ever blocked did not run: its project's runs24h and its history's runs
// do not count it.
func TestOnlyBlockedIsNotARun(t *testing.T) {
	d, _, _ := answersDeps(t,
		[]fixedRun{{"a#build", store.StatusFailed, 1}, {"b#build", store.StatusBlocked, 0}},
		[]fixedRun{{"a#build", store.StatusFailed, 1}, {"b#build", store.StatusBlocked, 0}})
	got := answer(t, d.getCacheStats(), `{"scope":{"project":"b"}}`)
	if got["runs24h"] != float64(0) || got["runCountLast24h"] != float64(0) {
		t.Errorf("getCacheStats {scope: {project: b}} counts runs that only blocked b: %v", got)
	}
	got = answer(t, d.getRunHistory(), `{"project":"b"}`)
	tasks, _ := got["history"].([]any)
	for _, s := range tasks {
		s := s.(map[string]any)
		if s["taskId"] == "b#build" && (s["runs"] != float64(0) || s["executions"] != float64(2)) {
			t.Errorf("b#build's statistics count its blocked executions as runs: %v", s)
		}
	}
	if len(tasks) == 0 {
		t.Errorf("getRunHistory {project: b}: no statistics: %v", got)
	}
}

// A state folder whose index is not a database is refused with what to do about it.
func TestCorruptIndexIsRefusedWithWhatToDo(t *testing.T) {
	d, root, _ := answersDeps(t, firstBuild)
	index := filepath.Join(root, ".vx", "index.db")
	for _, suffix := range []string{"-wal", "-shm"} {
		_ = os.Remove(index + suffix)
	}
	if err := os.WriteFile(index, []byte(strings.Repeat("not a database ", 400)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tl := range []tool.Tool{d.getCacheStats(), d.getRunHistory(), d.explainCacheKey()} {
		args := `{}`
		if tl.Name == "explainCacheKey" {
			args = `{"taskId":"a#build"}`
		}
		msg := refused(t, tl, args)
		if !strings.Contains(msg, "damaged") || !strings.Contains(msg, "run vx run") || !strings.Contains(msg, "mv ") {
			t.Errorf("%s on a corrupt index: %s", tl.Name, msg)
		}
	}
}

// checkLock without a lock says so in one line: the one problem, no drift row per task, the tasks
// counted, and listed only through the cursor.
func TestCheckLockWithoutALockIsOneLine(t *testing.T) {
	d, _, _ := answersDeps(t)
	pages := followPages(t, d.checkLock(), map[string]any{})
	var first struct {
		ExitCode int `json:"exitCode"`
		Lock     struct {
			NotAudited      int      `json:"notAudited"`
			Problems        []string `json:"problems"`
			Drift           []any    `json:"drift"`
			NotAuditedTasks []string `json:"notAuditedTasks"`
		} `json:"lock"`
	}
	if err := json.Unmarshal([]byte(pages[0]), &first); err != nil {
		t.Fatal(err)
	}
	l := first.Lock
	if first.ExitCode != 1 || l.NotAudited != 6 || len(l.Problems) != 1 || !strings.HasPrefix(l.Problems[0], "vx.lock is missing") ||
		len(l.Drift) != 0 || len(l.NotAuditedTasks) != 0 || len(pages) < 2 {
		t.Errorf("checkLock without a lock, first of %d pages: %s", len(pages), pages[0])
	}
	if rest := strings.Join(pages[1:], ""); !strings.Contains(rest, `"a#build"`) || !strings.Contains(rest, `"b#test"`) {
		t.Errorf("the cursor does not list the tasks not audited: %s", rest)
	}
}

// searchDocs for a common word answers each hit's heading and url first, its text left out,
// within a summary's size; section answers one hit whole.
func TestSearchDocsCommonWordIsHeadingsFirst(t *testing.T) {
	d := &Deps{}
	out, err := ask(t, d.searchDocs(), `{"query":"cache","limit":100}`)
	if err != nil || len(out) > summaryChars || !strings.Contains(out, `"textOmitted":true`) ||
		!strings.Contains(out, `"url":"docs/cache.md#the-cache","text":"","page":"cache","heading":"The cache"`) {
		t.Errorf("searchDocs {query: cache} = %d characters, %v: %.400s", len(out), err, out)
	}
	got := answer(t, d.searchDocs(), `{"query":"cache","section":"docs/cache.md#the-cache"}`)
	hits := got["docs"].(map[string]any)["hits"].([]any)
	if len(hits) != 1 || !strings.HasPrefix(hits[0].(map[string]any)["text"].(string), "# The cache\n") || got["textOmitted"] != nil {
		t.Errorf("searchDocs {section} = %v", got)
	}
	if msg := refused(t, d.searchDocs(), `{"query":"cache","section":"docs/nowhere.md#x"}`); !strings.Contains(msg, `"section"`) {
		t.Errorf("an unknown section: %s", msg)
	}
}

// whyDidThisRerun answers the original's found, hashChanged, thisRun, previousRun and note: on a
// task's first run hashChanged is null; a run that did not record the task, or blocked it (no
// key), is found: false rather than refused.
func TestWhyAnswersFoundAndHashChanged(t *testing.T) {
	d, _, runs := answersDeps(t, firstBuild, []fixedRun{{"a#build", store.StatusHit, 0}, {"b#build", store.StatusBlocked, 0}},
		[]fixedRun{{"a#build", store.StatusHit, 0}})
	first := answer(t, d.whyDidThisRerun(), `{"taskId":"a#build","runId":"`+runs[0]+`"}`)
	this, _ := first["thisRun"].(map[string]any)
	if first["found"] != true || first["hashChanged"] != nil || first["previousRun"] != nil || this["hash"] != "key-a#build" ||
		this["cacheHit"] != false || this["startedAt"].(float64) < 1e12 || first["note"] == "" {
		t.Errorf("why on a first run: %v", first)
	}
	second := answer(t, d.whyDidThisRerun(), `{"taskId":"a#build","runId":"`+runs[1]+`"}`)
	prev, _ := second["previousRun"].(map[string]any)
	if second["found"] != true || second["hashChanged"] != false || prev["runId"] != runs[0] || second["thisRun"].(map[string]any)["cacheHit"] != true {
		t.Errorf("why on a hit with the same key: %v", second)
	}
	for _, args := range []string{`{"taskId":"b#build","runId":"` + runs[1] + `"}`, `{"taskId":"b#build","runId":"` + runs[2] + `"}`} {
		got := answer(t, d.whyDidThisRerun(), args)
		if got["found"] != false || got["hashChanged"] != nil || got["note"] == "" {
			t.Errorf("why %s: %v", args, got)
		}
	}
}

// getRunHistory's per-task figures count every recorded execution of the task, not only those of
// the runs the limit answers, and the most recently run task comes first; runs lists one row per
// execution, newest first.
func TestRunHistoryCountsEveryExecution(t *testing.T) {
	d, _, runs := answersDeps(t, firstBuild, []fixedRun{{"a#build", store.StatusHit, 0}}, []fixedRun{{"b#build", store.StatusFailed, 1}})
	var got struct {
		Limit       int `json:"limit"`
		Invocations []struct {
			RunID string `json:"runId"`
		} `json:"invocations"`
		Runs []struct {
			RunID    string `json:"runId"`
			Project  string `json:"project"`
			Task     string `json:"task"`
			CacheHit bool   `json:"cacheHit"`
			EndedAt  int64  `json:"endedAt"`
		} `json:"runs"`
		History []struct {
			ID   string `json:"id"`
			Runs int    `json:"runs"`
		} `json:"history"`
	}
	out, err := ask(t, d.getRunHistory(), `{"limit":1}`)
	if err != nil || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("getRunHistory {limit: 1}: %v: %s", err, out)
	}
	if got.Limit != 1 || len(got.Invocations) != 1 || got.Invocations[0].RunID != runs[2] || len(got.Runs) != 1 ||
		got.Runs[0].Project != "b" || got.Runs[0].Task != "build" || got.Runs[0].EndedAt == 0 {
		t.Errorf("getRunHistory {limit: 1}: %s", out)
	}
	if len(got.History) != 2 || got.History[0].ID != "b#build" || got.History[0].Runs != 2 || got.History[1].ID != "a#build" || got.History[1].Runs != 2 {
		t.Errorf("the statistics do not count every execution, most recently run first: %+v", got.History)
	}
	if out, _ = ask(t, d.getRunHistory(), `{}`); !strings.HasPrefix(out, `{"limit":50,`) {
		t.Errorf("getRunHistory's default limit is not 50: %.80s", out)
	}
}

// getWorkspaceInfo answers, beside its attention lines and sections, the original's flat facts it
// knows: vx's version, the root, the cache's folder, entries, bytes and versions, the runs and hits
// of the last 24 hours, and whether there is a lockfile.
func TestWorkspaceInfoAnswersTheOriginalsFacts(t *testing.T) {
	d, root, _ := answersDeps(t, firstBuild, []fixedRun{{"a#build", store.StatusHit, 0}})
	d.Version = "9.9.9"
	out, err := ask(t, d.getWorkspaceInfo(), `{}`)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"vx": "9.9.9", "workspaceRoot": root, "cacheDir": filepath.Join(root, ".vx"), "cacheEntries": 2.0,
		"cacheBytes": 12.0, "schemaVersion": fmt.Sprint(store.SchemaVersion), "runs24h": 3.0, "hits24h": 1.0, "lockfile": false}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("getWorkspaceInfo's %s = %v, want %v", k, got[k], v)
		}
	}
	if v, _ := got["cacheVersion"].(string); v == "" || !strings.HasPrefix(out, `{"attention":`) {
		t.Errorf("getWorkspaceInfo: %.300s", out)
	}
	// The workers with the original's count and cores, the plugins with their seams.
	for _, want := range []string{`"workers":{"count":`, `"plugins":[{"name":"mcp","commands":["mcp"],"stage":false,"seams":["commands"]}]`, `"configErrors":[]`} {
		if !strings.Contains(out, want) {
			t.Errorf("getWorkspaceInfo lacks %s: %.2000s", want, out)
		}
	}
}
