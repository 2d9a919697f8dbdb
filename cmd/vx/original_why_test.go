package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/vzn/vx/internal/testkit"
)

// vx why --format json (whyDidThisRerun's answer, one function) carries the original's why
// fields and validates against why.json's why: on the task's first run nothing to compare
// (hashChanged null, previousRun null), after an edit of its input a changed key. The original's
// whole document (why nested, diff as entries, roots as chains) is not vx's: docs/mcp.md says why.
func TestWhyValidatesAgainstTheOriginal(t *testing.T) {
	dir := testkit.TempRepo(t, originalWorkspace)
	schema := originalSchema(t, "why", "", func(m map[string]any) {
		delete(m, "oneOf")
		m["$ref"] = "#/$defs/why"
	})
	vxRunQuiet(t, dir, "run", "build")
	first := cliJSON(t, dir, "why", "a#build")
	if err := os.WriteFile(filepath.Join(dir, "packages", "a", "src", "a.ts"), []byte("export const a = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vxRunQuiet(t, dir, "run", "build")
	second := cliJSON(t, dir, "why", "a#build")
	type why struct {
		Found       bool
		HashChanged *bool
		PreviousRun *struct{ Hash string }
		ThisRun     struct {
			Hash      string
			StartedAt int64
		}
	}
	for i, out := range []json.RawMessage{first, second} {
		validateOriginal(t, "vx why a#build", schema, out)
		var w why
		if err := json.Unmarshal(out, &w); err != nil {
			t.Fatal(err)
		}
		changed := i == 1
		if !w.Found || w.ThisRun.Hash == "" || w.ThisRun.StartedAt == 0 || (w.PreviousRun != nil) != changed ||
			(w.HashChanged == nil) == changed || (changed && !*w.HashChanged) {
			t.Errorf("run %d: vx why a#build = %s", i+1, out)
		}
	}
}
