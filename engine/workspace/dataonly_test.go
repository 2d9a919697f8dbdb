package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/vzn/vx/internal/testkit"
)

// dataWorkspace is a workspace whose every config file is only data, as vx init writes them.
var dataWorkspace = map[string]string{
	"vx.workspace.ts": "// vx config\nimport { defineWorkspace } from '@vzn/vx/config'\nimport { mcp } from '@vzn/vx-mcp'\n\n" +
		"export default defineWorkspace({\n  projects: ['packages/*', 'apps/web'],\n  plugins: [mcp({ run: ['build'] })],\n" +
		"  tasks: {\n    build: { command: 'npm run build', dependsOn: ['^build'], outputs: ['dist/**'] },\n" +
		"    test: { command: 'npm test', dependsOn: ['build'] },\n  },\n})\n",
	"package.json":                 `{"name": "root", "private": true, "scripts": {"lint": "eslint ."}}`,
	"packages/a/package.json":      `{"name": "a", "scripts": {"build": "tsc", "test": "vitest"}}`,
	"packages/b/package.json":      `{"name": "b", "dependencies": {"a": "*"}, "scripts": {"build": "tsc"}}`,
	"packages/b/vx.project.ts":     "import { defineProject } from '@vzn/vx/config'\nexport default defineProject({ tags: ['lib'], tasks: { test: false } })\n",
	"apps/web/package.json":        `{"name": "web", "dependencies": {"b": "*"}, "scripts": {"build": "vite build"}}`,
	"apps/web/vx.project.ts":       "import { defineProject } from '@vzn/vx/config'\n\nexport default defineProject({\n  tasks: { build: { outputs: ['build/**'] } },\n})\n",
	"packages/c/.keep":             "",
	"packages/c/vx.project.ts.txt": "not a config",
}

// noChild is an isolation that cannot start its child: a load through it that succeeds ran no
// child.
var noChild = &Isolation{Path: "/nonexistent/vx"}

// A workspace whose configs are only data loads in process, with no child, and resolves exactly
// as it does in the child.
func TestDataConfigLoadsWithoutAChild(t *testing.T) {
	ctx := context.Background()
	root := testkit.TempTree(t, dataWorkspace)
	got, err := NewLoader(Options{Dir: root, Isolate: noChild}).Load(ctx)
	if err != nil {
		t.Fatalf("a data config asked for a child: %v", err)
	}
	child := isolation(t)
	child.alwaysChild = true
	want, err := NewLoader(Options{Dir: root, Isolate: child}).Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	if string(a) != string(b) {
		t.Errorf("in process:\n%s\nin the child:\n%s", a, b)
	}
	if _, ok := got.Task("web#build"); !ok || got.MCP == nil {
		t.Errorf("tasks %v, mcp %v: want web#build and the mcp plugin's options", got.TaskIDs(), got.MCP)
	}
}

// A data config's own error is the one the child answers, at the same position.
func TestDataConfigErrorIsTheChilds(t *testing.T) {
	ctx := context.Background()
	for name, files := range map[string]map[string]string{
		"workspace": {"vx.workspace.ts": "import { defineWorkspace } from '@vzn/vx/config'\nexport default defineWorkspace({\n  projects: ['packages/*'],\n  tasks: { build: { command: 7 } },\n})\n"},
		"project": {
			"vx.workspace.ts":          "import { defineWorkspace } from '@vzn/vx/config'\nexport default defineWorkspace({ projects: ['packages/*'] })\n",
			"packages/a/vx.project.ts": "import { defineProject } from '@vzn/vx/config'\nexport default defineProject({\n  tags: 'lib',\n})\n",
		},
		"package.json": {
			"vx.workspace.ts":         "import { defineWorkspace } from '@vzn/vx/config'\nexport default defineWorkspace({ projects: ['packages/*'] })\n",
			"packages/a/package.json": "{ not json",
		},
	} {
		t.Run(name, func(t *testing.T) {
			root := testkit.TempTree(t, files)
			_, inProcess := NewLoader(Options{Dir: root, Isolate: noChild}).Load(ctx)
			child := isolation(t)
			child.alwaysChild = true
			_, inChild := NewLoader(Options{Dir: root, Isolate: child}).Load(ctx)
			if inProcess == nil || inChild == nil || inProcess.Error() != inChild.Error() {
				t.Errorf("in process: %v\nin the child: %v", inProcess, inChild)
			}
		})
	}
}

// Whatever is not only data, or passes the bounds an evaluation in process keeps to, is evaluated
// in the child: each of these asks for it (and so fails without one), and loads with one.
func TestNotDataGoesToTheChild(t *testing.T) {
	ctx := context.Background()
	ws := func(body string) map[string]string {
		return map[string]string{"vx.workspace.ts": "import { defineWorkspace } from '@vzn/vx/config'\nexport default defineWorkspace(" + body + ")\n", "packages/a/.keep": "", "x/y/z/.keep": ""}
	}
	bigPackage := `{"name": "big", "description": "` + strings.Repeat("x", maxDataPackageJSON) + `"}`
	many := ws("{ projects: ['packages/*'] }")
	for i := range maxDataPackageBytes/(maxDataPackageJSON/2) + 1 {
		many[fmt.Sprintf("packages/p%02d/package.json", i)] = `{"name": "p` + fmt.Sprint(i) + `", "description": "` + strings.Repeat("x", maxDataPackageJSON/2-40) + `"}`
	}
	for name, files := range map[string]map[string]string{
		"code in the workspace":  ws("{ projects: ['packages/' + '*'] }"),
		"no import":              {"vx.workspace.ts": "export default { projects: ['packages/*'] }\n", "packages/a/.keep": ""},
		"a code project":         merge(ws("{ projects: ['packages/*'] }"), map[string]string{"packages/a/vx.project.ts": "import { defineProject } from '@vzn/vx/config'\nconst tags = ['x']\nexport default defineProject({ tags })\n"}),
		"a TypeScript project":   merge(ws("{ projects: ['packages/*'] }"), map[string]string{"packages/a/vx.project.ts": "import { defineProject } from '@vzn/vx/config'\nexport default defineProject({ tags: ['x'] as string[] })\n"}),
		"a plugin stage":         ws("{ projects: ['packages/*'], plugins: [{ name: 'p', stage(t) { return t } }] }"),
		"alternatives":           ws("{ projects: ['{packages,x}/*'] }"),
		"a deep glob":            ws("{ projects: ['x/**'] }"),
		"a big package.json":     merge(ws("{ projects: ['packages/*'] }"), map[string]string{"packages/a/package.json": bigPackage}),
		"a big root package":     merge(ws("{ projects: ['packages/*'] }"), map[string]string{"package.json": bigPackage}),
		"many package.json":      many,
		"package.json workspace": {"vx.workspace.ts": "import { defineWorkspace } from '@vzn/vx/config'\nexport default defineWorkspace({})\n", "package.json": `{"workspaces": ["packages/{a,b}"], "description": "` + strings.Repeat("x", 10) + `"}`, "packages/a/.keep": ""},
	} {
		t.Run(name, func(t *testing.T) {
			root := testkit.TempTree(t, files)
			if _, err := NewLoader(Options{Dir: root, Isolate: noChild}).Load(ctx); err == nil || !strings.Contains(err.Error(), "child process") {
				t.Errorf("without a child: %v, want the child's start to fail", err)
			}
			if _, err := NewLoader(Options{Dir: root, Isolate: isolation(t)}).Load(ctx); err != nil {
				t.Errorf("with a child: %v", err)
			}
		})
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
