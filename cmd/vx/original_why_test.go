package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/vzn/vx/internal/testkit"
)

// vx why --format json (whyDidThisRerun's answer, one function) carries the original's why
// fields and validates against why.json's why: on the task's first run nothing to compare
// (hashChanged null, previousRun null), after an edit of its input a changed key. The original's
// whole document (why nested, diff as entries, roots as chains) is not vx's: docs/mcp.md says why.
func TestWhyValidatesAgainstTheOriginal(t *testing.T) {
	dir := testkit.TempRepo(t, originalWorkspace)
	schema := originalSchema(t, "why", "", nil)
	vxRunQuiet(t, dir, "run", "build")
	first := cliJSON(t, dir, "why", "a#build")
	if err := os.WriteFile(filepath.Join(dir, "packages", "a", "src", "a.ts"), []byte("export const a = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vxRunQuiet(t, dir, "run", "build")
	second := cliJSON(t, dir, "why", "a#build")
	downstream := cliJSON(t, dir, "why", "b#build")
	type entry struct{ Kind, Name, Change string }
	type why struct {
		Found       bool
		HashChanged *bool
		PreviousRun *struct{ Hash string }
		ThisRun     struct {
			Hash      string
			StartedAt int64
		}
		Why struct {
			Found       bool
			HashChanged *bool
		}
		Diff struct {
			Found          bool
			Entries        []entry
			UnchangedCount int
		}
		Roots []struct {
			Chain   []string
			Entries []entry
		}
	}
	for i, out := range []json.RawMessage{first, second, downstream} {
		validateOriginal(t, "vx why", schema, out)
		var w why
		if err := json.Unmarshal(out, &w); err != nil {
			t.Fatal(err)
		}
		changed := i > 0
		if !w.Found || !w.Why.Found || !w.Diff.Found || w.ThisRun.Hash == "" || w.ThisRun.StartedAt == 0 || (w.PreviousRun != nil) != changed ||
			(w.HashChanged == nil) == changed || (changed && !*w.HashChanged) || (w.Why.HashChanged == nil) != (w.HashChanged == nil) {
			t.Errorf("answer %d: vx why = %s", i+1, out)
		}
		switch i {
		case 0:
			if len(w.Diff.Entries) != 0 || len(w.Roots) != 0 {
				t.Errorf("first run: entries %+v, roots %+v", w.Diff.Entries, w.Roots)
			}
		case 1:
			if want := []entry{{"files", "src/a.ts", "changed"}}; !reflect.DeepEqual(w.Diff.Entries, want) || w.Diff.UnchangedCount != 0 {
				t.Errorf("a#build after an edit: entries %+v (unchanged %d), want %+v", w.Diff.Entries, w.Diff.UnchangedCount, want)
			}
		case 2:
			if want := []entry{{"upstream", "a#build", "changed"}}; !reflect.DeepEqual(w.Diff.Entries, want) || w.Diff.UnchangedCount != 1 {
				t.Errorf("b#build: entries %+v (unchanged %d), want %+v and src/b.ts unchanged", w.Diff.Entries, w.Diff.UnchangedCount, want)
			}
			if len(w.Roots) != 1 || !reflect.DeepEqual(w.Roots[0].Chain, []string{"b#build", "a#build"}) ||
				!reflect.DeepEqual(w.Roots[0].Entries, []entry{{"files", "src/a.ts", "changed"}}) {
				t.Errorf("b#build: roots %+v, want the chain b#build → a#build and src/a.ts", w.Roots)
			}
		}
	}
}
