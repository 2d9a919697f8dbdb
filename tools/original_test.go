package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	js, _ := json.Marshal(openSchema(m))
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
// lists: a client written against @vzn/vx-mcp reads them unchanged. getWorkspaceInfo keeps vx's
// own shape for now (docs/mcp.md, "The original's contract").
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
		"listTasks":       `{"project":"a"}`,
		"getCacheStats":   `{}`,
		"explainCacheKey": `{"taskId":"a#build"}`,
		"whyDidThisRerun": `{"taskId":"a#build","runId":"` + runs[1] + `"}`,
		"getRunHistory":   `{}`,
	} {
		tl := map[string]func() tool.Tool{"listTasks": d.listTasks, "getCacheStats": d.getCacheStats,
			"explainCacheKey": d.explainCacheKey, "whyDidThisRerun": d.whyDidThisRerun, "getRunHistory": d.getRunHistory}[name]()
		got := answer(t, tl, args)
		for _, p := range contract[name].Answer {
			if !hasPath(got, p) {
				t.Errorf("%s %s lacks the original's %s: %v", name, args, p, got)
			}
		}
	}
}
