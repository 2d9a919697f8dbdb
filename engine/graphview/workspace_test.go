package graphview_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/graphview"
	"github.com/vzn/vx/engine/runner"
	"github.com/vzn/vx/engine/runrequest"
	"github.com/vzn/vx/engine/summary"
	"github.com/vzn/vx/engine/workspace"
	"github.com/vzn/vx/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// smallWorkspace is three projects (web and api depend on lib) with build, test and lint, plus
// a deploy that is never cached; api's test fails.
func smallWorkspace(t *testing.T) string {
	t.Helper()
	files := map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({
  projects: ['packages/*'],
  tasks: {
    build: { command: 'mkdir -p dist && cp src/index.js dist/index.js', dependsOn: ['^build'], inputs: ['src/**'], outputs: ['dist/**'] },
    test: { command: 'sh test.sh', dependsOn: ['build'], inputs: ['src/**', 'test.sh'] },
    lint: { command: 'true', inputs: ['src/**'] },
  },
})
`,
		".gitignore":                 ".vx/\ndist/\n",
		"packages/lib/package.json":  `{"name": "lib"}`,
		"packages/web/package.json":  `{"name": "web", "dependencies": {"lib": "*"}}`,
		"packages/api/package.json":  `{"name": "api", "dependencies": {"lib": "*"}}`,
		"packages/api/vx.project.ts": "import { defineProject } from '@vzn/vx/config'\nexport default defineProject({ tags: ['backend'], tasks: { deploy: { command: 'echo deployed', dependsOn: ['test'], cache: false } } })\n",
	}
	for _, p := range []string{"lib", "web", "api"} {
		files["packages/"+p+"/src/index.js"] = "export const name = '" + p + "'\n"
		files["packages/"+p+"/test.sh"] = "test -s dist/index.js\n"
	}
	files["packages/api/test.sh"] = "echo 'expected 1, got 2 <at> api/src/index.js:1' >&2; exit 1\n"
	dir := testkit.TempTree(t, files)
	gitCommit(t, dir)
	return dir
}

// largeWorkspace is n projects as the peers' benchmark generator makes them (genmono.py): project
// i depends on up to three lower-numbered ones, half of them nearby, with build (after its
// dependencies' builds), test (after build) and lint: 3n tasks.
func largeWorkspace(t testing.TB, n int) string {
	t.Helper()
	files := map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({
  projects: ['packages/*'],
  tasks: {
    build: { command: "sh -c 'rm -rf dist && cp -R src dist'", dependsOn: ['^build'], inputs: ['src/**'], outputs: ['dist/**'] },
    test: { command: "sh -c 'test -s dist/index.js'", dependsOn: ['build'] },
    lint: { command: 'true', inputs: ['src/**'] },
  },
})
`,
		".gitignore": ".vx/\ndist/\n",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 1; i <= n; i++ {
		var deps []string
		if lower := i - 1; lower > 0 {
			picked := map[int]bool{}
			for k := rng.IntN(min(3, lower) + 1); len(picked) < k; {
				p := 1 + rng.IntN(lower)
				if rng.IntN(2) == 0 {
					p = max(1, i-1-rng.IntN(min(10, lower)))
				}
				picked[p] = true
			}
			for _, p := range slices.Sorted(maps.Keys(picked)) {
				deps = append(deps, fmt.Sprintf(`"p%04d": "*"`, p))
			}
		}
		name := fmt.Sprintf("p%04d", i)
		files["packages/"+name+"/package.json"] = fmt.Sprintf(`{"name": %q, "dependencies": {%s}}`, name, strings.Join(deps, ", "))
		files["packages/"+name+"/src/index.js"] = fmt.Sprintf("export const n = %d\n", i)
	}
	dir := testkit.TempTree(t, files)
	gitCommit(t, dir)
	return dir
}

func gitCommit(t testing.TB, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "x"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=vx", "-c", "user.email=vx@example.com"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

func load(t testing.TB, dir string) *graph.Workspace {
	t.Helper()
	ws, err := workspace.NewLoader(workspace.Options{Dir: dir, Getenv: func(string) string { return "" }}).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// request selects every task, on two workers.
func request(tasks ...string) runrequest.Request {
	so := workspace.SelectOptions{Tasks: tasks, All: len(tasks) == 0}
	return runrequest.Request{SelectOptions: so, Concurrency: 2, Getenv: func(string) string { return "" }}
}

// run runs the request in dir's workspace, as vx run does, and answers its summary.
func run(t *testing.T, dir string, req runrequest.Request) *summary.Summary {
	t.Helper()
	ctx := context.Background()
	ws := load(t, dir)
	prepared, err := runrequest.Prepare(ctx, ws, req)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := runner.Run(ctx, prepared.Options)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func build(t testing.TB, dir string, req runrequest.Request) *graphview.Graph {
	t.Helper()
	g, err := graphview.Build(context.Background(), load(t, dir), req, "--all")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
