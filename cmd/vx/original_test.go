package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/vzn/vx/internal/testkit"
)

// originalWorkspace is the small workspace the CLI's documents are checked on against the
// original's schemas: two projects, b's build after a's, and a lint with no outputs.
var originalWorkspace = map[string]string{
	"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({
  projects: ['packages/*'],
  tasks: {
    build: { command: 'mkdir -p dist && echo built > dist/out.txt', dependsOn: ['^build'], inputs: ['src/**'], outputs: ['dist/**'] },
    lint: { command: 'echo linted', inputs: ['src/**'] },
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

// originalSchema is the original's schema NAME (tools/testdata/original, its copies), its $defs'
// DEF when def is not "", with every additionalProperties: false removed (vx's additions allowed),
// narrowed by edit (the departures docs/mcp.md names) when not nil.
func originalSchema(t *testing.T, name, def string, edit func(m map[string]any)) *jsonschema.Resolved {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "tools", "testdata", "original", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var open func(v any)
	open = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ap, ok := x["additionalProperties"].(bool); ok && !ap {
				delete(x, "additionalProperties")
			}
			for _, e := range x {
				open(e)
			}
		case []any:
			for _, e := range x {
				open(e)
			}
		}
	}
	open(m)
	if def != "" {
		defs := m["$defs"]
		m = m["$defs"].(map[string]any)[def].(map[string]any)
		m["$defs"] = defs
	}
	if edit != nil {
		edit(m)
	}
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

// validateOriginal checks the JSON doc against a resolved schema of the original's.
func validateOriginal(t *testing.T, what string, r *jsonschema.Resolved, doc []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", what, err, doc)
	}
	if err := r.Validate(v); err != nil {
		t.Errorf("%s does not validate against the original's schema: %v\n%.1500s", what, err, doc)
	}
}

// A verb that refuses under --format json prints the original's error document, with the
// refusal's stable code.
func TestErrorDocumentValidatesAgainstTheOriginal(t *testing.T) {
	dir := testkit.TempRepo(t, originalWorkspace)
	schema := originalSchema(t, "error", "", nil)
	for _, c := range []struct {
		args []string
		code string
	}{
		{[]string{"run", "nope"}, "VX_E_UNKNOWN_TASK"},
		{[]string{"ls", "--bogus"}, "VX_E_USAGE"},
		{[]string{"ls", "-C", t.TempDir()}, "VX_E_NO_WORKSPACE"},
		{[]string{"why", "a#build", "--run", "zzzz"}, "VX_E_USAGE"},
	} {
		out, err := vxCommand(t, dir, append(c.args, "--format", "json")...).Output()
		if err == nil {
			t.Fatalf("vx %s answered %s, want a refusal", strings.Join(c.args, " "), out)
		}
		validateOriginal(t, "vx "+strings.Join(c.args, " "), schema, out)
		var doc struct{ Error struct{ Code string } }
		if json.Unmarshal(out, &doc) == nil && doc.Error.Code != c.code {
			t.Errorf("vx %s: code %q, want %q: %s", strings.Join(c.args, " "), doc.Error.Code, c.code, out)
		}
	}
}

// summaryDepartures narrows the original's summary.json by the task fields vx writes in its own
// vocabulary or shape on purpose (docs/mcp.md, "The original's contract"): status (vx's statuses),
// exitCode (null where no process ran), blockedBy (null for none), timedOut (false for none),
// sandboxViolations and notReady (lists of what happened), flaky (a flag beside attempts).
func summaryDepartures(m map[string]any) {
	task := m["$defs"].(map[string]any)["task"].(map[string]any)["properties"].(map[string]any)
	for _, k := range []string{"status", "exitCode", "blockedBy", "timedOut", "sandboxViolations", "notReady", "flaky"} {
		task[k] = map[string]any{}
	}
}

// vx run's summary (--format json, and the --summarize file) validates against the original's
// summary.json but for the departures docs/mcp.md names, and counts its tasks in the original's
// buckets: the first run's tasks ran; in the second the builds restored their outputs and the
// lints, which have none, were up to date.
func TestRunSummaryValidatesAgainstTheOriginal(t *testing.T) {
	dir := testkit.TempRepo(t, originalWorkspace)
	schema := originalSchema(t, "summary", "", summaryDepartures)
	type counts struct {
		Successful, CachedLocal, RestoredLocal, UpToDate, Total int
	}
	for i, want := range []counts{{Successful: 4, Total: 4}, {CachedLocal: 4, RestoredLocal: 2, UpToDate: 2, Total: 4}} {
		if i == 1 {
			for _, p := range []string{"a", "b"} {
				if err := os.RemoveAll(filepath.Join(dir, "packages", p, "dist")); err != nil {
					t.Fatal(err)
				}
			}
		}
		file := filepath.Join(t.TempDir(), "summary.json")
		out := cliJSON(t, dir, "run", "build", "lint", "--summarize="+file)
		validateOriginal(t, "vx run build --format json", schema, out)
		written, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		validateOriginal(t, "vx run build --summarize", schema, written)
		var doc struct {
			Counts counts `json:"summary"`
			Tasks  []struct{ ID, Project, Task string }
		}
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Counts != want {
			t.Errorf("run %d: summary %+v, want %+v", i+1, doc.Counts, want)
		}
		if len(doc.Tasks) != 4 || doc.Tasks[0].ID != doc.Tasks[0].Project+"#"+doc.Tasks[0].Task {
			t.Errorf("run %d: tasks %+v", i+1, doc.Tasks)
		}
	}
}

// vx run --dry=json validates against the original's plan.json, before the first run (every task
// a miss) and after it (every task a predicted hit), each row with the original's project, task,
// cacheStatus and deps; its p50Ms is null, not absent, without a history (docs/mcp.md).
func TestPlanValidatesAgainstTheOriginal(t *testing.T) {
	dir := testkit.TempRepo(t, originalWorkspace)
	schema := originalSchema(t, "plan", "", func(m map[string]any) {
		row := m["properties"].(map[string]any)["tasks"].(map[string]any)["items"].(map[string]any)["properties"].(map[string]any)
		row["p50Ms"] = map[string]any{"type": []any{"number", "null"}}
	})
	for _, want := range []string{"miss", "hit-local"} {
		out := cliJSON(t, dir, "run", "build", "lint", "--dry=json")
		validateOriginal(t, "vx run build lint --dry=json", schema, out)
		var plan struct {
			Tasks []struct {
				TaskID, Project, Task, CacheStatus string
				DependsOn, Deps                    []string
			}
		}
		if err := json.Unmarshal(out, &plan); err != nil {
			t.Fatal(err)
		}
		for _, r := range plan.Tasks {
			if r.TaskID != r.Project+"#"+r.Task || r.CacheStatus != want || strings.Join(r.Deps, " ") != strings.Join(r.DependsOn, " ") {
				t.Errorf("plan row %+v, want cacheStatus %s", r, want)
			}
		}
		if want == "miss" {
			vxRunQuiet(t, dir, "run", "build", "lint")
		}
	}
}

// vxRunQuiet runs `vx args…` in dir, which must succeed.
func vxRunQuiet(t *testing.T, dir string, args ...string) {
	t.Helper()
	if out, err := vxCommand(t, dir, args...).CombinedOutput(); err != nil {
		t.Fatalf("vx %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
