package info

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/configlock"
	"github.com/vzn/vx/engine/workspace"
	"github.com/vzn/vx/internal/testkit"
)

// A workspace with nothing to look at answers an empty attention list (never null); a broken
// project config and a lock that no longer matches the tasks each get a line, first in the text too.
func TestAttentionNamesWhatNeedsALook(t *testing.T) {
	dir := testkit.TempTree(t, map[string]string{"vx.workspace.ts": workspaceTS, "packages/a/index.js": "", "packages/b/index.js": ""})
	doc := answer(t, dir, env(nil), 0)
	raw, _ := json.Marshal(doc)
	if len(doc.Attention) != 0 || !bytes.HasPrefix(raw, []byte(`{"attention":[],`)) {
		t.Errorf("a clean workspace: %.200s", raw)
	}

	// A lock written, then a task's command changed: the lock has drifted.
	writeLock(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "vx.workspace.ts"), []byte(strings.Replace(workspaceTS, "build: { command: 'true'", "build: { command: 'make'", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "packages/b/vx.project.ts"), []byte("export default {\n  name: ,\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	doc = answer(t, dir, env(nil), 0)
	if len(doc.Attention) != 2 || !strings.HasPrefix(doc.Attention[0], "1 config file(s) did not load (configErrors), first packages/b/vx.project.ts:2:") ||
		!strings.HasPrefix(doc.Attention[1], "vx.lock has drifted: ") {
		t.Errorf("attention: %q", doc.Attention)
	}
	var text bytes.Buffer
	if err := doc.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(text.String(), "\n"); len(lines) < 3 || !strings.HasPrefix(lines[1], "attention  1 config file(s)") {
		t.Errorf("text:\n%s", text.String())
	}
}

// Flaky tasks are counted, the first few named.
func TestAttentionCountsFlakyTasks(t *testing.T) {
	doc := &Document{FlakyTasks: Section{Known: true, Value: FlakyReport{Count: 5, Tasks: []string{"a#test", "b#test", "c#test", "d#test", "e#test"}}}}
	got := attentionOf(doc)
	if len(got) != 1 || got[0] != "5 flaky task(s) (one cache key both passed and failed): a#test, b#test, c#test and 2 more" {
		t.Errorf("attention: %q", got)
	}
	doc = &Document{Sandbox: Section{Known: true, Value: SandboxReport{Verdict: "no Landlock", TasksRequiring: 2}},
		Lock: Section{Known: true, Value: configlock.Status{File: "vx.lock", State: configlock.StateUpToDate}}}
	if got := attentionOf(doc); len(got) != 1 || !strings.HasPrefix(got[0], "2 task(s) require a sandbox this host does not enforce") {
		t.Errorf("attention: %q", got)
	}
}

// writeLock writes vx.lock for the workspace in dir as it is now.
func writeLock(t *testing.T, dir string) {
	t.Helper()
	ws, err := workspace.NewLoader(workspace.Options{Dir: dir, Getenv: env(nil)}).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	data, err := configlock.Marshal(configlock.Of(ws))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, configlock.FileName), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
