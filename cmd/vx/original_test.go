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
// original's schemas: two projects, b's build after a's.
var originalWorkspace = map[string]string{
	"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({
  projects: ['packages/*'],
  tasks: {
    build: { command: 'mkdir -p dist && echo built > dist/out.txt', dependsOn: ['^build'], inputs: ['src/**'], outputs: ['dist/**'] },
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
