package config

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vzn/vx/engine/vxerr"
	"github.com/vzn/vx/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// writeFiles lays out files (path → text) under a new temp folder.
func writeFiles(t *testing.T, files map[string]string) string { return testkit.TempTree(t, files) }

func evalWorkspace(t *testing.T, root string, console *bytes.Buffer) (*Session, *Module, error) {
	t.Helper()
	s := NewSession(Options{Root: root, CacheDir: filepath.Join(root, ".vx"), Console: console, Version: "test", Timeout: time.Second})
	m, err := s.EvalWorkspace(context.Background(), "vx.workspace.ts")
	return s, m, err
}

func TestEvalWorkspaceWithLocalImportJSONAndPositions(t *testing.T) {
	root := writeFiles(t, map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
import { mcp } from '@vzn/vx-mcp'
import { buildCmd } from './tools/cmd'
import pkg from './package.json'

type T = { command: string }
const build: T = { command: buildCmd(pkg.name) }
console.log('loading', { n: 1 })
export default defineWorkspace({
  projects: ['packages/*'],
  plugins: [mcp({ run: ['test'] })],
  tasks: {
    build: {
      command: build.command,
      outputs: ['dist/**'],
    },
  },
})
`,
		"tools/cmd.ts": "export const buildCmd = (n: string): string => `sh build.sh ${n}`\n",
		"package.json": `{"name": "root"}`,
	})
	var console bytes.Buffer
	s, m, err := evalWorkspace(t, root, &console)
	if err != nil {
		t.Fatal(err)
	}
	tasks := m.Value["tasks"].(map[string]any)
	if got := tasks["build"].(map[string]any)["command"]; got != "sh build.sh root" {
		t.Errorf("command = %v", got)
	}
	if got := console.String(); got != "loading {\"n\":1}\n" {
		t.Errorf("console = %q", got)
	}
	for path, want := range map[string]int{"tasks.build.command": 14, "tasks.build.outputs": 15, "projects": 10, "tasks.build.nope": 13} {
		line, _, ok := s.Position("vx.workspace.ts", path)
		if !ok || line != want {
			t.Errorf("Position(%s) = %d %v, want line %d", path, line, ok, want)
		}
	}
	var inputs []string
	for _, in := range s.Inputs() {
		r, _ := filepath.Rel(root, in)
		inputs = append(inputs, r)
	}
	if got := strings.Join(inputs, " "); got != "package.json tools/cmd.ts vx.workspace.ts" {
		t.Errorf("inputs = %s", got)
	}
}

func TestEvalErrorsNameTheTypeScriptPosition(t *testing.T) {
	for name, tc := range map[string]struct {
		files map[string]string
		want  string
	}{
		"syntax": {map[string]string{"vx.workspace.ts": "export default {\n  tasks: {\n    build: { command: 'x' \n  }\n}}}\n"}, "vx.workspace.ts:5:3: Unexpected \"}\""},
		"throw":  {map[string]string{"vx.workspace.ts": "type A = string\nconst a: A = 'x'\nfunction boom(): never {\n  throw new Error('no tasks here')\n}\nexport default boom()\n"}, "vx.workspace.ts:4:9: Error: no tasks here"},
		"throw in import": {map[string]string{
			"vx.workspace.ts": "import { f } from './lib/f'\nexport default f()\n",
			"lib/f.ts":        "\n\nexport function f(): object {\n  const x: any = undefined\n  return x.y\n}\n"}, "lib/f.ts:5:"},
		"node builtin": {map[string]string{"vx.workspace.ts": "import fs from 'node:fs'\nexport default { x: fs.readFileSync }\n"}, "vx.workspace.ts:1:16: cannot import \"node:fs\": vx config runs without Node"},
		"timeout":      {map[string]string{"vx.workspace.ts": "while (true) {}\nexport default {}\n"}, "config ran longer than 1s"},
		"no default":   {map[string]string{"vx.workspace.ts": "export const x = 1\n"}, "vx.workspace.ts: no default export"},
	} {
		t.Run(name, func(t *testing.T) {
			root := writeFiles(t, tc.files)
			_, _, err := evalWorkspace(t, root, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			if _, ok := err.(*vxerr.ConfigError); !ok {
				t.Errorf("err is %T, want *vxerr.ConfigError", err)
			}
		})
	}
}

func TestBundleCacheReusedAndInvalidated(t *testing.T) {
	root := writeFiles(t, map[string]string{
		"vx.workspace.ts": "import { v } from './v'\nexport default { projects: [v] }\n",
		"v.ts":            "export const v = 'a'\n",
	})
	if err := os.Mkdir(filepath.Join(root, ".vx"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"a", "a", "b"} {
		if i == 2 {
			if err := os.WriteFile(filepath.Join(root, "v.ts"), []byte("export const v = 'b'\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, m, err := evalWorkspace(t, root, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Value["projects"].([]any)[0]; got != want {
			t.Fatalf("run %d: projects[0] = %v, want %s", i, got, want)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(root, ".vx", "config"))
	if len(entries) != 2 { // one bundle and its dep file: the stale bundle was removed
		t.Errorf("cache holds %d files, want 2", len(entries))
	}
}

func TestNoCacheWithoutStateFolder(t *testing.T) {
	root := writeFiles(t, map[string]string{"vx.workspace.ts": "export default {}\n"})
	if _, _, err := evalWorkspace(t, root, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ".vx")); !os.IsNotExist(err) {
		t.Errorf(".vx exists after a read: %v", err)
	}
}

func TestEvalProjectsAndStage(t *testing.T) {
	root := writeFiles(t, map[string]string{
		"vx.workspace.ts": `export default { plugins: [{ name: 'p', stage(tasks: any) { return { ...tasks, 'a#extra': { command: 'echo' } } } }] }`,
		"a/vx.project.ts": "import { defineProject } from '@vzn/vx/config'\nexport default defineProject({\n  name: 'a',\n  tasks: { build: false },\n})\n",
		"b/vx.project.ts": "export default { name: 'b' }\n",
	})
	s, ws, err := evalWorkspace(t, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	mods, err := s.EvalProjects(context.Background(), []string{"a/vx.project.ts", "b/vx.project.ts"})
	if err != nil {
		t.Fatal(err)
	}
	if mods[0].Value["name"] != "a" || mods[1].Value["name"] != "b" || mods[0].Value["tasks"].(map[string]any)["build"] != false {
		t.Fatalf("modules = %v %v", mods[0].Value, mods[1].Value)
	}
	if line, _, ok := s.Position("a/vx.project.ts", "tasks.build"); !ok || line != 4 {
		t.Errorf("position of a's tasks.build = %d %v", line, ok)
	}
	stage := s.PluginStage(ws, 0)
	if stage == nil {
		t.Fatal("no stage")
	}
	out, err := s.CallStage(context.Background(), stage, map[string]any{"a#build": map[string]any{"command": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 {
		t.Errorf("stage returned %v", out)
	}
}
