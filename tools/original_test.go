package tools

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/engine/store"
)

// openSchema answers the schema v with every additionalProperties: false removed, at any depth:
// the original's document with vx's additions allowed.
func openSchema(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if ap, ok := x["additionalProperties"].(bool); ok && !ap {
			delete(x, "additionalProperties")
		}
		for k, e := range x {
			x[k] = openSchema(e)
		}
	case []any:
		for i, e := range x {
			x[i] = openSchema(e)
		}
	}
	return v
}

// originalSchema loads testdata/original/NAME.json (its $defs' DEF when def is not ""), opened.
func originalSchema(t *testing.T, name, def string) *jsonschema.Resolved {
	t.Helper()
	return resolveSchema(t, name, originalSchemaMap(t, name, def))
}

// originalSchemaMap is NAME.json (its $defs' DEF when def is not ""), opened, as a map a test
// may narrow further by the departures docs/mcp.md names.
func originalSchemaMap(t *testing.T, name, def string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "original", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if def != "" {
		m = m["$defs"].(map[string]any)[def].(map[string]any)
	}
	return openSchema(m).(map[string]any)
}

// resolveSchema resolves the schema map m of NAME.json.
func resolveSchema(t *testing.T, name string, m map[string]any) *jsonschema.Resolved {
	t.Helper()
	js, _ := json.Marshal(m)
	var s jsonschema.Schema
	if err := json.Unmarshal(js, &s); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// vx's documents validate against the original's schemas (testdata/original), vx's additions
// allowed: vx cache prune, vx lock --check, vx init --dry and vx docs as pruneCache, checkLock,
// planInit and searchDocs answer them under the original's keys; explainCacheKey as the original's
// explanation; whyDidThisRerun's found answer as the original's why.
func TestDocumentsValidateAgainstTheOriginal(t *testing.T) {
	// The opened schemas still check the original's fields and shapes: vx's former prune document
	// (evicted a list) and lock document (audited a list, problems objects) fail.
	for schema, old := range map[string]string{
		"cache": `{"dryRun":true,"evicted":[],"bytesFreed":0,"orphans":0,"orphanBytes":0}`,
		"lock":  `{"upToDate":false,"audited":[],"notAudited":["a#build"],"problems":[{"taskId":"a#build"}]}`,
	} {
		var v any
		_ = json.Unmarshal([]byte(old), &v)
		if originalSchema(t, schema, "").Validate(v) == nil {
			t.Errorf("%s.json accepts %s", schema, old)
		}
	}
	d, _, runs := answersDeps(t, firstBuild, []fixedRun{{"a#build", store.StatusHit, 0}})
	for _, c := range []struct {
		tool, args, key, schema, def string
	}{
		{"pruneCache", `{}`, "prune", "cache", ""},
		{"pruneCache", `{"maxSize":"0"}`, "prune", "cache", ""},
		{"checkLock", `{}`, "lock", "lock", ""},
		{"planInit", `{}`, "init", "init", ""},
		{"searchDocs", `{"query":"cache key","limit":2}`, "docs", "docs", ""},
		{"searchDocs", `{"query":"cache"}`, "docs", "docs", ""},
		{"explainCacheKey", `{"taskId":"a#build"}`, "", "why", "explanation"},
		{"explainCacheKey", `{"taskId":"a#test"}`, "", "why", "explanation"},
		{"whyDidThisRerun", `{"taskId":"a#build","runId":"` + runs[0] + `"}`, "", "why", "why"},
		{"whyDidThisRerun", `{"taskId":"a#build","runId":"` + runs[1] + `"}`, "", "why", "why"},
	} {
		tools := map[string]func() tool.Tool{"pruneCache": d.pruneCache, "checkLock": d.checkLock, "planInit": d.planInit,
			"searchDocs": d.searchDocs, "explainCacheKey": d.explainCacheKey, "whyDidThisRerun": d.whyDidThisRerun}
		got := answer(t, tools[c.tool](), c.args)
		var doc any = got
		if c.key != "" {
			doc = got[c.key]
		}
		if err := originalSchema(t, c.schema, c.def).Validate(doc); err != nil {
			js, _ := json.Marshal(doc)
			t.Errorf("%s %s does not validate against the original's %s.json %s: %v\n%.600s", c.tool, c.args, c.schema, c.def, err, js)
		}
	}
}

// hasPath reports whether the JSON value v has the contract path p: "a.b" a member, "a[]" the
// elements of a list (held by every element, vacuously by an empty list).
func hasPath(v any, p string) bool {
	if p == "" {
		return true
	}
	head, rest, _ := strings.Cut(p, ".")
	name, each := strings.CutSuffix(head, "[]")
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	child, ok := m[name]
	if !ok {
		return false
	}
	if !each {
		return rest == "" || child == nil || hasPath(child, rest)
	}
	list, ok := child.([]any)
	if !ok {
		return false
	}
	for _, el := range list {
		if !hasPath(el, rest) {
			return false
		}
	}
	return true
}

// The answers of the original's tool contract (testdata/original/tools.json) carry every path it
// lists: a client written against @vzn/vx-mcp reads them unchanged. getWorkspaceInfo has no bun
// and bunSupported: vx does not run on Bun (docs/mcp.md, "The original's contract").
func TestAnswersCarryTheOriginalsPaths(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "original", "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var contract map[string]struct{ Answer []string }
	if err := json.Unmarshal(data, &contract); err != nil {
		t.Fatal(err)
	}
	d, _, runs := answersDeps(t, firstBuild, []fixedRun{{"a#build", store.StatusHit, 0}})
	for name, args := range map[string]string{
		"listTasks":        `{"project":"a"}`,
		"getCacheStats":    `{}`,
		"explainCacheKey":  `{"taskId":"a#build"}`,
		"whyDidThisRerun":  `{"taskId":"a#build","runId":"` + runs[1] + `"}`,
		"getRunHistory":    `{}`,
		"getWorkspaceInfo": `{}`,
	} {
		tl := map[string]func() tool.Tool{"listTasks": d.listTasks, "getCacheStats": d.getCacheStats,
			"explainCacheKey": d.explainCacheKey, "whyDidThisRerun": d.whyDidThisRerun, "getRunHistory": d.getRunHistory,
			"getWorkspaceInfo": d.getWorkspaceInfo}[name]()
		got := answer(t, tl, args)
		for _, p := range contract[name].Answer {
			if name == "getWorkspaceInfo" && (p == "bun" || p == "bunSupported") {
				continue
			}
			if !hasPath(got, p) {
				t.Errorf("%s %s lacks the original's %s: %v", name, args, p, got)
			}
		}
	}
}

// notRequired removes names from the required list of the schema map m: fields vx does not answer
// on purpose (docs/mcp.md, "The original's contract").
func notRequired(m map[string]any, names ...string) map[string]any {
	var kept []any
	for _, r := range m["required"].([]any) {
		if !slices.Contains(names, r.(string)) {
			kept = append(kept, r)
		}
	}
	m["required"] = kept
	return m
}

// getWorkspaceInfo (vx info --format json) answers the original's flat facts in its shapes, vx's
// own sections beside them under other names, and each fact is read from the workspace: git's
// version and status caches, the machine's memory, the cache's orphan blobs, the hits that
// restored outputs, the flaky tasks with their counts, the workers and the sandbox.
func TestWorkspaceInfoValidatesAgainstTheOriginal(t *testing.T) {
	d, root, _ := answersDeps(t, firstBuild)
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(root, ".vx"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Two runs: a#test failed, then passed with the same key; a#build hit and restored 3 files.
	restored, zero, one := 3, 0, 1
	for r, execs := range [][]store.Execution{
		{{TaskID: "a#test", Status: store.StatusFailed, Hash: "key-a#test", ExitCode: &one}},
		{{TaskID: "a#build", Status: store.StatusHit, CacheSource: "local", Hash: "key-a#build", RestoredFiles: &restored},
			{TaskID: "a#test", Status: store.StatusMiss, Hash: "key-a#test", ExitCode: &zero},
			{TaskID: "b#test", Status: store.StatusFailed, Hash: "key-b#test", ExitCode: &one}},
	} {
		at := time.Now().Add(time.Duration(r-2) * time.Minute)
		id := store.NewRunID(at)
		if err := st.BeginRun(ctx, store.Run{ID: id, Started: at, TaskCount: len(execs)}); err != nil {
			t.Fatal(err)
		}
		for i := range execs {
			execs[i].RunID, execs[i].Ord, execs[i].Started, execs[i].Duration = id, i, at, time.Millisecond
			execs[i].Project, execs[i].Task, _ = strings.Cut(execs[i].TaskID, "#")
		}
		if err := st.Record(ctx, store.Batch{Executions: execs}); err != nil {
			t.Fatal(err)
		}
		if err := st.FinishRun(ctx, id, store.RunFailed, 1, at.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	// A blob no entry references: an orphan.
	orphan := filepath.Join(st.SharedDir(), "cas", "ab", strings.Repeat("ab", 32))
	st.Close()
	if err := os.MkdirAll(filepath.Dir(orphan), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(orphan, []byte("seventeen bytes!\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", root, "config", "core.untrackedCache", "true").CombinedOutput(); err != nil {
		t.Fatalf("git config: %v: %s", err, out)
	}
	// lockfile is the config lock's (the original's vx-lock.json), not a package manager's.
	if err := os.WriteFile(filepath.Join(root, "package-lock.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := answer(t, d.getWorkspaceInfo(), `{}`); got["lockfile"] != false {
		t.Errorf("lockfile = %v with only package-lock.json, want false", got["lockfile"])
	}
	if err := os.WriteFile(filepath.Join(root, "vx.lock"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := answer(t, d.getWorkspaceInfo(), `{}`)
	js, _ := json.Marshal(got)
	if got["lockfile"] != true {
		t.Errorf("lockfile = %v with vx.lock, want true", got["lockfile"])
	}

	// The original's document, but for bun and bunSupported: vx does not run on Bun.
	if err := resolveSchema(t, "info", notRequired(originalSchemaMap(t, "info", ""), "bun", "bunSupported")).Validate(got); err != nil {
		t.Errorf("getWorkspaceInfo does not validate against the original's info.json: %v\n%.3000s", err, js)
	}
	gitVersion, err := exec.Command("git", "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Git            *string
		GitStatusCache *struct{ Fsmonitor, UntrackedCache bool }
		Memory         struct{ UsableBytes, TotalBytes int64 }
		Orphans        struct {
			Artifacts int
			Bytes     int64
		}
		Hits24h, Restored24h int
		FlakyTasks           []store.FlakyCount
		Workers              struct {
			Count, Cores int
			Source       string
		}
		Sandbox struct {
			Available bool
			Declared  int
			Untraced  *string
		}
		SandboxReport struct{ Value struct{ Enforced bool } }
		Repository    struct{ Available bool }
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimPrefix(strings.TrimSpace(string(gitVersion)), "git version "); doc.Git == nil || *doc.Git != want {
		t.Errorf("git = %v, want %q", doc.Git, want)
	}
	if c := doc.GitStatusCache; c == nil || c.Fsmonitor || !c.UntrackedCache {
		t.Errorf("gitStatusCache = %+v, want untrackedCache on, fsmonitor off", c)
	}
	if total := memTotal(t); total != 0 && (doc.Memory.TotalBytes != total || doc.Memory.UsableBytes > total || doc.Memory.UsableBytes <= 0) {
		t.Errorf("memory = %+v; /proc/meminfo says %d bytes", doc.Memory, total)
	}
	if doc.Orphans.Artifacts != 1 || doc.Orphans.Bytes != 17 {
		t.Errorf("orphans = %+v, want the one blob of 17 bytes", doc.Orphans)
	}
	if doc.Hits24h != 1 || doc.Restored24h != 1 {
		t.Errorf("hits24h %d, restored24h %d; want 1 and 1", doc.Hits24h, doc.Restored24h)
	}
	if want := []store.FlakyCount{{TaskID: "a#test", Project: "a", Task: "test", Keys: 1, Passes: 1, Failures: 1}}; !reflect.DeepEqual(doc.FlakyTasks, want) {
		t.Errorf("flakyTasks = %+v, want %+v", doc.FlakyTasks, want)
	}
	if w := doc.Workers; w.Count != runtime.NumCPU() || w.Cores != runtime.NumCPU() || w.Source != "cores" {
		t.Errorf("workers = %+v, want the CPU count from cores", w)
	}
	if s := doc.Sandbox; s.Available != doc.SandboxReport.Value.Enforced || s.Declared != 0 || (s.Untraced != nil) != s.Available {
		t.Errorf("sandbox = %+v; vx's report says enforced %v", s, doc.SandboxReport.Value.Enforced)
	}
	if !doc.Repository.Available {
		t.Errorf("repository (vx's git status) = %+v, want available", doc.Repository)
	}
}

// memTotal is the machine's memory as /proc/meminfo says it, 0 where there is none.
func memTotal(t *testing.T) int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	return 0
}

// all: true beside task names selects those tasks in every project, as vx run build --all does,
// never every task; alone it selects every task (a persistent one aside).
func TestPlanTasksAllBesideTaskNames(t *testing.T) {
	d, _, _ := answersDeps(t, firstBuild)
	for args, want := range map[string]string{
		`{"tasks":["build"],"all":true}`: "a#build b#build",
		`{"all":true}`:                   "a#build a#test b#build b#test",
	} {
		got := answer(t, d.planTasks(), args)
		var ids []string
		for _, r := range got["plan"].(map[string]any)["tasks"].([]any) {
			ids = append(ids, r.(map[string]any)["taskId"].(string))
		}
		slices.Sort(ids)
		if strings.Join(ids, " ") != want {
			t.Errorf("planTasks %s planned %v, want %s", args, ids, want)
		}
	}
}
