package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vzn/vx/internal/testkit"
)

func TestMain(m *testing.M) {
	// The isolation tests start this test binary as their config evaluation child.
	if len(os.Args) == 2 && os.Args[1] == EvalConfigArg {
		os.Exit(ServeEval(context.Background(), os.Stdin, os.Stdout, os.NewFile(3, "console"), os.NewFile(4, "steps")))
	}
	goleak.VerifyTestMain(m)
}

func writeTree(t testing.TB, root string, files map[string]string) { testkit.WriteTree(t, root, files) }

func TestLoaderSeesEditsBetweenCalls(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"vx.workspace.ts":          "import { cmd } from './cmd'\nexport default { projects: ['packages/*'], tasks: { build: { command: cmd } } }\n",
		"cmd.ts":                   "export const cmd = 'make one'\n",
		"packages/a/.keep":         "",
		"packages/b/vx.project.ts": "export default { name: 'bee' }\n",
	})
	backdate(t, root)
	l := NewLoader(Options{Dir: filepath.Join(root, "packages", "a")})
	ctx := context.Background()
	first, err := l.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	again, err := l.Load(ctx)
	if err != nil || again != first {
		t.Fatalf("unchanged workspace was evaluated again (err %v)", err)
	}
	check := func(what, want string) {
		t.Helper()
		ws, err := l.Load(ctx)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		var got []string
		for _, id := range ws.TaskIDs() {
			task, _ := ws.Task(id)
			got = append(got, id+"="+task.Command)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("after %s: tasks %v, want %s", what, got, want)
		}
	}
	// An imported module changes: the next load sees it (no restart, unlike Bun's module cache).
	backdate(t, root) // what was written before is an hour old: the next write moves its mtime
	writeTree(t, root, map[string]string{"cmd.ts": "export const cmd = 'make two'\n"})
	check("editing an import", "a#build=make two bee#build=make two")
	// A project config appears, a project folder appears.
	backdate(t, root)
	writeTree(t, root, map[string]string{"packages/a/vx.project.ts": "export default { tasks: { build: false } }\n"})
	check("adding a project config", "bee#build=make two")
	backdate(t, root)
	writeTree(t, root, map[string]string{"packages/c/package.json": `{"name": "sea"}`})
	check("adding a project", "bee#build=make two sea#build=make two")
	// A broken config fails that call; fixing it recovers.
	backdate(t, root)
	writeTree(t, root, map[string]string{"cmd.ts": "export const cmd = \n"})
	if _, err := l.Load(ctx); err == nil || !strings.Contains(err.Error(), "cmd.ts:2:1: Unexpected end of file") {
		t.Errorf("broken import: err = %v", err)
	}
	backdate(t, root)
	writeTree(t, root, map[string]string{"cmd.ts": "export const cmd = 'make three'\n"})
	check("fixing the import", "bee#build=make three sea#build=make three")
}

// backdate sets every file's times an hour back, so their stamps are not racy.
func backdate(t testing.TB, root string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	err := filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestStagesRunInPluginOrder(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"vx.workspace.ts": `
const addLint = { name: 'add-lint', stage(tasks: Record<string, any>) {
  const out = { ...tasks }
  for (const id of Object.keys(tasks)) {
    const [p] = id.split('#')
    out[p + '#lint'] = { command: 'eslint .', cache: true }
  }
  return out
} }
const wrap = { name: 'wrap', stage(tasks: Record<string, any>) {
  for (const t of Object.values(tasks)) t.command = 'time ' + t.command
  return tasks
} }
const look = { name: 'look', stage() { /* returns nothing: no change */ } }
export default { projects: ['a'], plugins: [addLint, wrap, look], tasks: { build: { command: 'make', dependsOn: ['lint'] } } }
`,
		"a/.keep": "",
	})
	ws, err := NewLoader(Options{Dir: root}).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lint, ok := ws.Task("a#lint")
	if !ok || lint.Command != "time eslint ." || lint.Origins.Get("command").File != "plugin wrap" {
		t.Fatalf("a#lint = %+v", lint)
	}
	build, _ := ws.Task("a#build")
	if build.Command != "time make" || strings.Join(build.DependsOn, ",") != "a#lint" {
		t.Errorf("a#build = %+v", build)
	}
	if o := build.Origins.Get("dependsOn"); o.File != "vx.workspace.ts" {
		t.Errorf("unchanged dependsOn origin = %v", o)
	}
	if len(ws.Plugins) != 3 || !ws.Plugins[0].Stage {
		t.Errorf("plugins = %+v", ws.Plugins)
	}
}

func TestSelectOrdersByDependencies(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"vx.workspace.ts":      "export default { projects: ['p/*'], tasks: { build: { command: 'x', dependsOn: ['^build'] }, test: { command: 'y', dependsOn: ['build'] } } }\n",
		"p/app/package.json":   `{"name": "app", "dependencies": {"ui": "*"}}`,
		"p/ui/package.json":    `{"name": "ui", "dependencies": {"core": "*"}}`,
		"p/core/package.json":  `{"name": "core"}`,
		"p/other/package.json": `{"name": "other"}`,
	})
	ctx := context.Background()
	ws, err := NewLoader(Options{Dir: root}).Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sel, err := Select(ctx, ws, SelectOptions{Tasks: []string{"test"}, Filters: []string{"app"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sel.TaskIDs, " "); got != "core#build ui#build app#build app#test" {
		t.Errorf("order = %s", got)
	}
	if got := strings.Join(sel.Requested, " "); got != "app#test" {
		t.Errorf("requested = %s", got)
	}
	for _, tc := range []struct {
		opts SelectOptions
		want string
	}{
		{SelectOptions{Tasks: []string{"deploy"}}, `unknown task "deploy": no project declares it`},
		{SelectOptions{Tasks: []string{"app#"}}, `task id "app#" is missing a half`},
		{SelectOptions{Filters: []string{""}}, `--filter needs a value`},
	} {
		if _, err := Select(ctx, ws, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Select(%+v) err = %v, want %q", tc.opts, err, tc.want)
		}
	}
}

// generate lays out a workspace of n projects, each depending on the previous two, half with a
// vx.project.ts that overrides a field.
func generate(b testing.TB, root string, n int) {
	files := map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
import { mcp } from '@vzn/vx-mcp'
export default defineWorkspace({
  projects: ['packages/*'],
  plugins: [mcp()],
  tasks: {
    build: { command: 'sh build.sh', dependsOn: ['^build'], inputs: ['src/**'], outputs: ['dist/**'] },
    test: { command: 'sh test.sh', dependsOn: ['build'], timeout: '2m' },
    lint: { command: 'sh lint.sh', inputs: ['src/**', '.eslintrc'] },
  },
})
`,
	}
	for i := 0; i < n; i++ {
		deps := ""
		for _, d := range []int{i - 1, i - 2} {
			if d >= 0 {
				deps += fmt.Sprintf(`"pkg-%03d": "*",`, d)
			}
		}
		files[fmt.Sprintf("packages/pkg-%03d/package.json", i)] = fmt.Sprintf(`{"name": "pkg-%03d", "dependencies": {%s}}`, i, strings.TrimSuffix(deps, ","))
		if i%2 == 0 {
			files[fmt.Sprintf("packages/pkg-%03d/vx.project.ts", i)] = "import { defineProject } from '@vzn/vx/config'\nexport default defineProject({ tags: ['even'], tasks: { build: { outputs: ['dist/**', 'types/**'] } } })\n"
		}
	}
	writeTree(b, root, files)
}

// BenchmarkLoad500 measures config evaluation and graph resolution of a 500-project workspace:
// cold (no bundle cache), with the bundle cached under .vx/ (a new process's CLI call), and in
// one process with nothing changed (the MCP server's next call).
func BenchmarkLoad500(b *testing.B) {
	root := b.TempDir()
	generate(b, root, 500)
	backdate(b, root)
	ctx := context.Background()
	b.Run("cold", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			ws, err := NewLoader(Options{Dir: root, Getenv: func(string) string { return "" }}).Load(ctx)
			if err != nil || len(ws.Projects) != 500 {
				b.Fatal(err)
			}
		}
	})
	if err := os.Mkdir(filepath.Join(root, ".vx"), 0o755); err != nil {
		b.Fatal(err)
	}
	if _, err := NewLoader(Options{Dir: root}).Load(ctx); err != nil {
		b.Fatal(err)
	}
	b.Run("bundle-cached", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := NewLoader(Options{Dir: root}).Load(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("in-process", func(b *testing.B) {
		l := NewLoader(Options{Dir: root})
		if _, err := l.Load(ctx); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := l.Load(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A new process (a new Loader) reads the resolved workspace back from .vx/ while nothing changed,
// without secret values, and evaluates again after an edit.
func TestResolvedWorkspaceKeptOnDisk(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"vx.workspace.ts": "export default { projects: ['a'], tasks: { build: { command: 'make', exec: { env: { T: { secret: 'TOKEN' } } } } } }\n",
		"a/.keep":         "",
	})
	if err := os.Mkdir(filepath.Join(root, ".vx"), 0o755); err != nil {
		t.Fatal(err)
	}
	backdate(t, root)
	getenv := func(k string) string {
		if k == "TOKEN" {
			return "hunter2-secret"
		}
		return ""
	}
	ctx := context.Background()
	first, err := NewLoader(Options{Dir: root, Getenv: getenv}).Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(resolvedFile(filepath.Join(root, ".vx")))
	if err != nil || strings.Contains(string(data), "hunter2-secret") {
		t.Fatalf("resolved.gob: %v, holds the secret: %v", err, strings.Contains(string(data), "hunter2-secret"))
	}
	if c := readResolved(filepath.Join(root, ".vx"), root, ""); c == nil {
		t.Fatal("the kept workspace does not read back")
	}
	again, err := NewLoader(Options{Dir: root, Getenv: getenv}).Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if task, _ := again.Task("a#build"); task == nil || task.Command != "make" || len(again.Secrets) != 1 || again.Secrets[0] != "hunter2-secret" {
		t.Fatalf("read back: %+v, secrets %v", task, again.Secrets)
	}
	if again == first {
		t.Fatal("a new loader answered the first loader's workspace")
	}
	writeTree(t, root, map[string]string{"vx.workspace.ts": "export default { projects: ['a'], tasks: { build: { command: 'make all' } } }\n"})
	if c := readResolved(filepath.Join(root, ".vx"), root, ""); c != nil {
		t.Fatal("a stale kept workspace read back")
	}
	edited, err := NewLoader(Options{Dir: root, Getenv: getenv}).Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if task, _ := edited.Task("a#build"); task.Command != "make all" {
		t.Errorf("after the edit: %q", task.Command)
	}
}

// Every task field of graph.TaskFields has a codec, and no codec is for another field.
func TestFieldCodecsCoverTaskFields(t *testing.T) {
	names := taskFieldNames()
	if len(fieldCodecs) != len(names) {
		t.Errorf("%d codecs for %d fields", len(fieldCodecs), len(names))
	}
	for _, n := range names {
		if c, ok := fieldCodecs[n]; !ok || c.read == nil || c.copy == nil {
			t.Errorf("field %s has no codec", n)
		}
	}
}

// A size in the config is read by the one grammar the CLI and prune use, and must be above
// zero: "0GiB" is refused when the config loads, not when a run starts.
func TestConfigSizesArePositive(t *testing.T) {
	for value, ok := range map[string]bool{"'6GiB'": true, "'512 mib'": true, "1048576": true, "'0GiB'": false, "0": false, "'lots'": false, "'1PB'": false} {
		root := testkit.TempTree(t, map[string]string{
			"vx.workspace.ts": "export default { projects: ['p'], memoryBudget: " + value + ", tasks: { b: { command: 'true' } } }\n",
			"p/package.json":  `{"name":"p"}`,
		})
		_, err := NewLoader(Options{Dir: root}).Load(context.Background())
		if ok != (err == nil) {
			t.Errorf("memoryBudget: %s: %v", value, err)
		}
		if err != nil && !strings.Contains(err.Error(), "memoryBudget must be a positive size") {
			t.Errorf("memoryBudget: %s: the error does not name the field: %v", value, err)
		}
	}
}

// A config file written while it is evaluated leaves a workspace that no later load takes for
// current: which content was read is not known, so the next load evaluates again.
func TestConfigWrittenDuringEvaluationIsEvaluatedAgain(t *testing.T) {
	root := t.TempDir()
	config := func(word string) string {
		return "export default { projects: ['packages/*'], tasks: { say: { command: 'echo " + word + "' } } }\n"
	}
	writeTree(t, root, map[string]string{"vx.workspace.ts": config("first"), "packages/a/package.json": `{"name": "a"}`})
	backdate(t, root)
	steps, wrote := 0, false
	c, _, err := evalInProcess(context.Background(), evalSetup{root: root, cacheDir: t.TempDir(), version: "test",
		getenv: func(string) string { return "" },
		step: func(string) {
			if steps++; steps == 2 { // the bundle of the config is made: an editor saves it now
				wrote = true
				writeTree(t, root, map[string]string{"vx.workspace.ts": config("second")})
			}
		}})
	if err != nil || !wrote {
		t.Fatalf("evaluate: %v (wrote during it: %v)", err, wrote)
	}
	if task, ok := c.WS.Task("a#say"); !ok || task.Command != "echo first" {
		t.Fatalf("evaluated %+v, want the first config's command", task)
	}
	if c.statsMatch(c.ConfigFiles) || c.unchanged() {
		t.Error("the stamps of a config written while it was evaluated match the file: a load would keep the first config")
	}
}
