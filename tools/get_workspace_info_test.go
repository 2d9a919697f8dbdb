package tools

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// getWorkspaceInfo's output schema describes the answer as written: the original's flat facts
// (each with its type, workers and sandbox with their fields) beside vx's sections, and the answer
// validates against it.
func TestWorkspaceInfoOutputSchemaListsTheFacts(t *testing.T) {
	d, _, _ := answersDeps(t, firstBuild)
	tl := d.getWorkspaceInfo()
	var s struct {
		Properties map[string]struct {
			Type       any
			AnyOf      []struct{ Type any }
			Properties map[string]any
		}
	}
	if err := json.Unmarshal(tl.OutputSchema, &s); err != nil {
		t.Fatal(err)
	}
	for name, typ := range map[string]string{"vx": "string", "workspaceRoot": "string", "cacheDir": "string", "cacheEntries": "integer",
		"cacheBytes": "integer", "cacheVersion": "string", "schemaVersion": "string", "runs24h": "integer", "hits24h": "integer",
		"orphans": "object", "gitStatusCache": "", "lockfile": "boolean", "memory": "object", "workers": "object", "sandbox": "object",
		"plugins": "array", "projects": "integer", "tasks": "integer", "flakyTasks": "array", "configErrors": "array", "git": "",
		"repository": "object", "attention": "array"} {
		p, ok := s.Properties[name]
		if !ok {
			t.Errorf("getWorkspaceInfo's output schema has no %s", name)
			continue
		}
		if p.Type == nil && len(p.AnyOf) > 0 {
			p.Type = p.AnyOf[0].Type // a list or an object that may be null
		}
		if typ != "" && p.Type != typ {
			t.Errorf("getWorkspaceInfo's output schema: %s is %v, want %s", name, p.Type, typ)
		}
	}
	for obj, fields := range map[string][]string{"workers": {"count", "cores", "cpuQuota", "source"}, "sandbox": {"available", "declared", "reason", "untraced"}} {
		for _, f := range fields {
			if _, ok := s.Properties[obj].Properties[f]; !ok {
				t.Errorf("getWorkspaceInfo's output schema: %s has no %s", obj, f)
			}
		}
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(tl.OutputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	r, err := schema.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Validate(map[string]any(answer(t, tl, `{}`))); err != nil {
		t.Errorf("getWorkspaceInfo's answer does not validate against its output schema: %v", err)
	}
}
