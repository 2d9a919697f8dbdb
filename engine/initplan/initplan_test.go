package initplan

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vzn/vx/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite the golden plans in testdata")

// fixture copies testdata/name to a temp folder, so a test may write into it.
func fixture(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", name))); err != nil {
		t.Fatal(err)
	}
	return dir
}

func planJSON(t *testing.T, p *Plan) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(p); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestInitGoldenPlans plans each fixture dry and compares the plan with testdata/NAME.plan.json
// (go test -update rewrites them).
func TestInitGoldenPlans(t *testing.T) {
	for _, name := range []string{"turbo-starter", "turbo-kitchen-sink", "nx-integrated", "nx-acme", "plain-scripts"} {
		t.Run(name, func(t *testing.T) {
			dir := fixture(t, name)
			p, err := Init(Options{Dir: dir, Dry: true})
			if err != nil {
				t.Fatal(err)
			}
			got := planJSON(t, p)
			golden := filepath.Join("testdata", name+".plan.json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("plan differs from %s (go test -update rewrites it):\n%s", golden, got)
			}
			if _, err := os.Stat(filepath.Join(dir, "vx.workspace.ts")); err == nil {
				t.Fatal("a dry run wrote vx.workspace.ts")
			}
		})
	}
}

func TestInitTurboPlan(t *testing.T) {
	p, err := Init(Options{Dir: filepath.Join(fixture(t, "turbo-starter"), "apps", "web"), Dry: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode != ModeTurbo || p.PackageManager != "pnpm" {
		t.Fatalf("mode %s pm %s", p.Mode, p.PackageManager)
	}
	ws := p.Files[0]
	for _, want := range []string{
		"projects: ['apps/*', 'packages/*'],",
		"command: 'pnpm run build',",
		"dependsOn: ['^build'],",
		"outputs: ['.next/**', '!.next/cache/**'],",
		"'check-types': { command: 'pnpm run check-types', dependsOn: ['^check-types'], ifScript: true },",
		"dev: {\n      command: 'pnpm run dev',\n      cache: false,\n      persistent: true,\n      ifScript: true,\n    },",
	} {
		if !strings.Contains(ws.Text, want) {
			t.Errorf("vx.workspace.ts lacks %q:\n%s", want, ws.Text)
		}
	}
	// $TURBO_DEFAULT$ beside other globs is vx's '$default' beside them.
	if !strings.Contains(ws.Text, "inputs: ['$default', '.env*'],") {
		t.Errorf("$TURBO_DEFAULT$ was not translated to '$default':\n%s", ws.Text)
	}
	// Turborepo runs a task only where the package has the script: ifScript says so, and no
	// package needs a vx.project.ts to leave a task out.
	for _, f := range p.Files[1:] {
		if f.Path != ".gitignore" {
			t.Errorf("a file beside vx.workspace.ts: %+v", f)
		}
	}
}

func TestInitNxNonRunCommandsExecutorIsTodo(t *testing.T) {
	p, err := Init(Options{Dir: fixture(t, "nx-integrated"), Dry: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode != ModeNx {
		t.Fatalf("mode %s", p.Mode)
	}
	want := Todo{File: "apps/shop/project.json", Key: "targets.build.executor",
		Message: "the executor @nx/vite:build has no vx equivalent: declare the command it runs (the tool's own CLI) in vx.project.ts"}
	if !slices.ContainsFunc(p.Todos, func(td Todo) bool { return td.File == want.File && td.Key == want.Key && td.Message == want.Message }) {
		t.Fatalf("no todo %+v in %+v", want, p.Todos)
	}
}

func TestInitWriteKeepsAndForces(t *testing.T) {
	dir := fixture(t, "plain-scripts")
	p, err := Init(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if p.Dry || p.Files[0].Status != StatusNew {
		t.Fatalf("first init: %+v", p.Files[0])
	}
	wsFile := filepath.Join(dir, "vx.workspace.ts")
	data, err := os.ReadFile(wsFile)
	if err != nil || string(data) != p.Files[0].Text {
		t.Fatalf("written %q, %v", data, err)
	}

	if err := os.WriteFile(wsFile, []byte("// mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err = Init(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if p.Files[0].Status != StatusKept {
		t.Fatalf("second init: %+v", p.Files[0])
	}
	if data, _ := os.ReadFile(wsFile); string(data) != "// mine\n" {
		t.Fatal("an existing vx.workspace.ts was replaced without --force")
	}

	p, err = Init(Options{Dir: dir, Force: true, Dry: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Files[0].Status != StatusReplaced {
		t.Fatalf("dry forced init: %+v", p.Files[0])
	}
	if data, _ := os.ReadFile(wsFile); string(data) != "// mine\n" {
		t.Fatal("a dry run wrote")
	}
	if _, err := Init(Options{Dir: dir, Force: true}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(wsFile); string(data) == "// mine\n" {
		t.Fatal("--force did not replace vx.workspace.ts")
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(tmp) > 0 {
		t.Fatalf("temp files left: %v", tmp)
	}
}

func TestInitBadMode(t *testing.T) {
	if _, err := Init(Options{Dir: t.TempDir(), Mode: "bazel"}); err == nil || !strings.Contains(err.Error(), `--mode "bazel"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestInitModeNeedsItsConfig(t *testing.T) {
	dir := fixture(t, "plain-scripts")
	for _, mode := range []string{ModeTurbo, ModeNx} {
		if _, err := Init(Options{Dir: dir, Mode: mode, Dry: true}); err == nil || !strings.Contains(err.Error(), "--mode "+mode+": no ") {
			t.Errorf("%s: err = %v", mode, err)
		}
	}
	// A turbo.json task no package has a script for is noted, not planned.
	tdir := fixture(t, "turbo-starter")
	if err := os.WriteFile(filepath.Join(tdir, "turbo.json"), []byte(`{"tasks": {"e2e": {}, "lint": {}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Init(Options{Dir: tdir, Mode: ModeTurbo, Dry: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(p.Notes, "turbo.json tasks no package has a script for, so no project has them: e2e") {
		t.Errorf("notes: %q", p.Notes)
	}
}

func TestInitEmptyFolder(t *testing.T) {
	p, err := Init(Options{Dir: t.TempDir(), Dry: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode != ModeScripts || len(p.Projects) != 0 || len(p.Files) != 2 || p.Files[1].Path != ".gitignore" || p.Files[1].Text != ".vx/\n" {
		t.Fatalf("plan: %+v", p)
	}
}

func TestInitPnpmWorkspaceGlobs(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"packages:\n  - 'apps/*'\n  - \"packages/*\" # ui\n  - '!**/test/**'\n", "apps/*|packages/*|!**/test/**"},
		{"# c\npackages: [apps/*, 'libs/**']\ncatalog:\n  react: ^19\n", "apps/*|libs/**"},
		{"catalog:\n  - x\npackages:\n- tools/*\nonlyBuiltDependencies:\n  - esbuild\n", "tools/*"},
	} {
		got, err := pnpmWorkspaceGlobs(tc.yaml)
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		if strings.Join(got, "|") != tc.want {
			t.Errorf("%q: got %v, want %s", tc.yaml, got, tc.want)
		}
	}
	if _, err := pnpmWorkspaceGlobs("packages:\n  apps: x\n"); err == nil {
		t.Error("a packages map was read as a list")
	}
}

func TestInitStripJSONC(t *testing.T) {
	in := `{
  // comment "with quotes"
  "a": "http://x/*y*/", /* block */
  "b": [1, 2,],
}`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.jsonc"), []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if ok, err := readJSON(dir, "x.jsonc", &v); !ok || err != nil {
		t.Fatalf("readJSON: %v %v", ok, err)
	}
	if v["a"] != "http://x/*y*/" || len(v["b"].([]any)) != 2 {
		t.Fatalf("a = %v", v["a"])
	}
}

func TestInitPackageJSONWorkspacesForms(t *testing.T) {
	for _, raw := range []string{`["a/*"]`, `{"packages": ["a/*"], "nohoist": []}`} {
		p := packageJSON{Workspaces: json.RawMessage(raw)}
		got, err := p.workspaceGlobs("package.json")
		if err != nil || len(got) != 1 || got[0] != "a/*" {
			t.Errorf("%s: %v %v", raw, got, err)
		}
	}
}

// writeFiles lays out files (path → text) under a new temp folder.
func writeFiles(t *testing.T, files map[string]string) string { return testkit.TempTree(t, files) }

// TestInitNxPackageBased covers a package-based Nx repository: package.json scripts are targets, the
// package.json nx block configures them, includedScripts limits them, targetDefaults apply.
func TestInitNxPackageBased(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"package.json": `{"name": "root", "workspaces": ["packages/*"]}`,
		"bun.lock":     "",
		"nx.json":      `{"targetDefaults": {"build": {"dependsOn": ["^build"], "cache": true}, "test": {"cache": true}}}`,
		"packages/a/package.json": `{"name": "a", "scripts": {"build": "tsc", "test": "vitest", "lint": "eslint ."},
			"nx": {"includedScripts": ["build", "test"], "tags": ["x"], "targets": {"build": {"outputs": ["{projectRoot}/lib"]}}}}`,
		"packages/b/package.json": `{"name": "b", "dependencies": {"a": "*"}, "scripts": {"build": "tsc", "test": "vitest"},
			"nx": {"targets": {"test": {"dependsOn": [{"target": "build", "projects": "self"}]}}}}`,
	})
	p, err := Init(Options{Dir: dir, Dry: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode != ModeNx || p.PackageManager != "bun" {
		t.Fatalf("mode %s pm %s", p.Mode, p.PackageManager)
	}
	ws := p.Files[0].Text
	for _, want := range []string{"projects: ['packages/*'],", "command: 'bun run build'", "dependsOn: ['^build']"} {
		if !strings.Contains(ws, want) {
			t.Errorf("vx.workspace.ts lacks %q:\n%s", want, ws)
		}
	}
	var a, b string
	for _, f := range p.Files {
		switch f.Path {
		case "packages/a/vx.project.ts":
			a = f.Text
		case "packages/b/vx.project.ts":
			b = f.Text
		}
	}
	if !strings.Contains(a, "tags: ['x'],") || strings.Contains(a, "lint") {
		t.Errorf("packages/a/vx.project.ts:\n%s", a)
	}
	if !strings.Contains(ws+a+b, "outputs: ['lib/**']") || !strings.Contains(ws+b, "dependsOn: ['build']") {
		t.Errorf("outputs or dependsOn lost:\n%s\n%s\n%s", ws, a, b)
	}
}

func TestInitDuplicatePackageNames(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"package.json":   `{"workspaces": ["a", "b"]}`,
		"a/package.json": `{"name": "x", "scripts": {"build": "true"}}`,
		"b/package.json": `{"name": "x", "scripts": {"build": "true"}}`,
	})
	p, err := Init(Options{Dir: dir, Dry: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(p.Todos, func(td Todo) bool { return td.File == "b/package.json" && td.Key == "name" }) {
		t.Fatalf("todos: %+v", p.Todos)
	}
	if got := p.Files[0].Text; !strings.Contains(got, "projects: ['a', 'b'],") {
		t.Fatalf("vx.workspace.ts:\n%s", got)
	}
}

// TestInitTurboPackageConfig covers a package's own turbo.json, a package-specific task and Turborepo 1's
// pipeline with an env dependency.
func TestInitTurboPackageConfig(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"package.json":      `{"workspaces": ["packages/*"]}`,
		"package-lock.json": `{}`,
		"turbo.json": `{
			// Turborepo 1
			"pipeline": {
				"build": {"dependsOn": ["^build", "$API_URL"], "outputs": ["dist/**"], "env": ["NODE_ENV", "NEXT_PUBLIC_*"]},
				"test": {"dependsOn": ["build"], "cache": false, "passThroughEnv": ["JEST_*", "!JEST_TOKEN"]},
				"b#test": {"outputs": ["coverage/**"]},
			},
			"globalEnv": ["CI"],
			"globalPassThroughEnv": ["SENTRY_DSN"],
			"envMode": "loose"
		}`,
		"packages/a/package.json": `{"name": "a", "scripts": {"build": "tsc", "test": "vitest"}}`,
		"packages/a/turbo.json":   `{"extends": ["//"], "tasks": {"build": {"outputs": ["lib/**"]}}}`,
		"packages/b/package.json": `{"name": "b", "scripts": {"test": "vitest"}}`,
	})
	p, err := Init(Options{Dir: dir, Dry: true})
	if err != nil {
		t.Fatal(err)
	}
	all := ""
	for _, f := range p.Files {
		all += "-- " + f.Path + "\n" + f.Text
	}
	for _, want := range []string{
		"env: ['API_URL', 'NODE_ENV'],",                                            // env dependency and env, sorted
		"passThroughEnv: ['NEXT_PUBLIC_*'],",                                       // a wildcard: seen by the task, in no key (and a todo)
		"  env: ['CI'],\n  passThroughEnv: ['SENTRY_DSN'],\n  envMode: 'loose',\n", // globalEnv, globalPassThroughEnv, envMode
		"build: { outputs: ['lib/**'] },",                                          // packages/a/turbo.json overrides the root's outputs
		"test: {\n      command: 'npm run test',\n      dependsOn: ['build'],\n      passThroughEnv: ['JEST_*', '!JEST_TOKEN'],\n      cache: false,",
		"-- packages/b/vx.project.ts",
		"test: {\n      dependsOn: [],\n      outputs: ['coverage/**'],\n      passThroughEnv: [],\n      cache: true,\n    },", // b#test replaces the generic test
	} {
		if !strings.Contains(all, want) {
			t.Errorf("plan lacks %q:\n%s", want, all)
		}
	}
	if !slices.ContainsFunc(p.Todos, func(td Todo) bool { return td.Key == "pipeline.build.env" }) {
		t.Errorf("no todo for the NEXT_PUBLIC_* wildcard: %+v", p.Todos)
	}
}

// TestInitIgnoresStateFolder: vx init adds .vx/ to the root .gitignore itself, keeping what the
// file holds and with no --force, says so in a note, and lists the file to commit; run again, or
// where git ignores .vx by another rule, it leaves .gitignore alone.
func TestInitIgnoresStateFolder(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		".gitignore":              "node_modules/\ndist",
		"package.json":            `{"name": "r", "workspaces": ["packages/*"]}`,
		"packages/a/package.json": `{"name": "a", "scripts": {"build": "tsc"}}`,
	})
	p, err := Init(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	last := p.Files[len(p.Files)-1]
	if last.Path != ".gitignore" || last.Status != StatusUpdated {
		t.Errorf("the plan's last file: %+v", last)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, ".gitignore")); string(data) != "node_modules/\ndist\n.vx/\n" {
		t.Errorf(".gitignore after vx init: %q", data)
	}
	if !hasNote(p, ".gitignore: .vx/ added") || !strings.Contains(strings.Join(p.Next, "\n"), " .gitignore vx.lock") {
		t.Errorf("notes %q, next %q", p.Notes, p.Next)
	}
	if strings.Contains(strings.Join(p.Next, "\n"), ">> .gitignore") {
		t.Errorf("next still asks to edit .gitignore: %q", p.Next)
	}

	again, err := Init(Options{Dir: dir, Dry: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range again.Files {
		if f.Path == ".gitignore" {
			t.Errorf("a second vx init plans .gitignore again: %+v", f)
		}
	}

	byRule := writeFiles(t, map[string]string{".gitignore": ".*\n", "package.json": `{"name": "r"}`})
	if out, err := exec.Command("git", "-C", byRule, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	p, err = Init(Options{Dir: byRule, Dry: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Files {
		if f.Path == ".gitignore" {
			t.Errorf("git ignores .vx by '.*', yet vx init plans .gitignore: %+v", f)
		}
	}
}

// A turbo.json task with dependsOn that no package has a script for is a group Turborepo runs in
// every package: vx init makes it a group template (no command, in every project), and a
// package without one of its dependencies gets the group without that dependency.
func TestInitTurboGroupTask(t *testing.T) {
	dir := fixture(t, "turbo-starter")
	if err := os.WriteFile(filepath.Join(dir, "turbo.json"), []byte(`{"tasks": {
		"build": {"dependsOn": ["^build"], "outputs": ["dist/**"]},
		"lint": {},
		"ci": {"dependsOn": ["build", "lint"]},
		"e2e": {}
	}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Init(Options{Dir: dir, Mode: ModeTurbo, Dry: true})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range p.Files {
		files[f.Path] = f.Text
	}
	if ws := files["vx.workspace.ts"]; !strings.Contains(ws, "ci: { dependsOn: ['build', 'lint'] },") {
		t.Fatalf("no group template ci in vx.workspace.ts:\n%s", ws)
	}
	// ui has lint and no build; the config packages have neither.
	if ui := files["packages/ui/vx.project.ts"]; !strings.Contains(ui, "ci: { dependsOn: ['lint'] },") {
		t.Errorf("packages/ui keeps the template's build: %s", ui)
	}
	if cfg := files["packages/eslint-config/vx.project.ts"]; !strings.Contains(cfg, "ci: { dependsOn: [] },") {
		t.Errorf("packages/eslint-config keeps dependencies it lacks: %s", cfg)
	}
	for _, n := range p.Notes {
		if strings.Contains(n, "no package has a script for") && strings.Contains(n, "ci") {
			t.Errorf("ci noted as a task no package has: %q", n)
		}
	}
	if !slices.Contains(p.Notes, "turbo.json tasks no package has a script for, so no project has them: e2e") {
		t.Errorf("e2e (no dependsOn) is no group and stays a note: %q", p.Notes)
	}
}
