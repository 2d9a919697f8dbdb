package initplan

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// planFiles plans dir dry and answers each planned file's text by path.
func planFiles(t *testing.T, dir string) (*Plan, map[string]string) {
	t.Helper()
	p, err := Init(Options{Dir: dir, Dry: true})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range p.Files {
		files[f.Path] = f.Text
	}
	return p, files
}

func hasNote(p *Plan, part string) bool {
	return slices.ContainsFunc(p.Notes, func(n string) bool { return strings.Contains(n, part) })
}

// TestInitKitchenSink checks the shapes the issue names on the kitchen-sink fixture, beside its golden
// plan: where they break, the failure says which.
func TestInitKitchenSink(t *testing.T) {
	p, files := planFiles(t, fixture(t, "turbo-kitchen-sink"))
	ws := files["vx.workspace.ts"]
	for _, want := range []string{
		"written by `vx init` from .config/turbo.jsonc",
		"projects: ['.', 'apps/*', 'packages/*', '!packages/legacy', '!packages/scripts'],",
		"globalInputs: ['//tsconfig.base.json', '//.env'],\n  env: ['NODE_ENV'],",
		"inputs: ['src/**', 'test/**', '//jest.config.base.js'],",
		"dev: {\n      command: 'pnpm run dev',\n      cache: false,\n      persistent: true,\n      ifScript: true,\n    },",
		"clean: {\n      command: 'pnpm run clean',\n      cache: false,\n      all: false,\n      ifScript: true,\n    },",
	} {
		if !strings.Contains(ws, want) {
			t.Errorf("vx.workspace.ts lacks %q:\n%s", want, ws)
		}
	}
	// The root task is the root project's, and only it.
	if root := files["vx.project.ts"]; !strings.Contains(root, "lint: { command: 'pnpm run lint', inputs: ['*.json', '*.md', '.config/**'] },") ||
		strings.Contains(root, "build") {
		t.Errorf("vx.project.ts:\n%s", root)
	}
	// web#build stays web's; the workspace build stays turbo.json's build.
	if web := files["apps/web/vx.project.ts"]; !strings.Contains(web, "build: { outputs: ['.next/**', '!.next/cache/**'], env: ['NEXT_PUBLIC_API_HOST'] },") {
		t.Errorf("apps/web/vx.project.ts:\n%s", web)
	}
	if !strings.Contains(ws, "outputs: ['dist/**', 'storybook-static/**'],") || strings.Contains(ws, "NEXT_PUBLIC_API_HOST") {
		t.Errorf("a package's override became the template:\n%s", ws)
	}
	// Packages without scripts get no task and no file; nor does any package just to leave a task out.
	for _, pr := range p.Projects {
		if strings.HasPrefix(pr.Dir, "packages/config-") || pr.Dir == "packages/jest-presets" {
			if len(pr.Tasks) > 0 {
				t.Errorf("%s has tasks %v", pr.Dir, pr.Tasks)
			}
		}
	}
	leavesOut := regexp.MustCompile(`(?m)^    [\w'-]+: false,$`)
	for path, text := range files {
		if leavesOut.MatchString(text) {
			t.Errorf("%s leaves a task out:\n%s", path, text)
		}
	}
	if len(files) != 5 {
		t.Errorf("files: %v", slices.Sorted(func(yield func(string) bool) {
			for k := range files {
				if !yield(k) {
					return
				}
			}
		}))
	}
	if !hasNote(p, "Turborepo's config is .config/turbo.jsonc, as the package.json script build names it") {
		t.Errorf("notes: %q", p.Notes)
	}
	// The fixture's .gitignore ends without a newline: .vx/ goes on a line of its own.
	if gi := files[".gitignore"]; !strings.HasSuffix(gi, "storybook-static\n.env\n.vx/\n") {
		t.Errorf(".gitignore planned as %q", gi)
	}
	if !hasNote(p, ".gitignore: .vx/ added") {
		t.Errorf("notes: %q", p.Notes)
	}
}

func TestInitNxAcme(t *testing.T) {
	p, files := planFiles(t, fixture(t, "nx-acme"))
	ws := files["vx.workspace.ts"]
	for _, want := range []string{
		"projects: ['.', 'apps/*', 'libs/*'],",
		// sharedGlobals, used by default; the workspace files a target adds stay its own; the
		// root tsconfig.base.json, in every Nx task's hash
		"globalInputs: ['//babel.config.json', '//tsconfig.base.json'],",
		// test names default and ^production: the project's files and production's globs in
		// each of its dependencies
		"inputs: ['$default', '//jest.preset.js', '^$default', '^!**/*.spec.ts', '^!tsconfig.spec.json', '^!vite.config.ts'],",
		// production is {projectRoot}/**/* less some files: vx's '$default' less the same files;
		// ^production the same globs in each dependency
		"inputs: ['$default', '!**/*.spec.ts', '!tsconfig.spec.json', '!vite.config.ts', '^$default', '^!**/*.spec.ts', '^!tsconfig.spec.json', '^!vite.config.ts'],",
	} {
		if !strings.Contains(ws, want) {
			t.Errorf("vx.workspace.ts lacks %q:\n%s", want, ws)
		}
	}
	for path, want := range map[string]string{
		"vx.project.ts":              "name: 'acme',",
		"apps/web/vx.project.ts":     "serve: { command: 'vite --port 4200', cache: false, persistent: true },",
		"apps/api/vx.project.ts":     "outputs: ['//dist/apps/api/**'],",
		"libs/ui/vx.project.ts":      "inputs: ['src/**/*.ts', '!src/**/*.spec.ts', '//.eslintrc.json'],",
		"apps/web-e2e/vx.project.ts": "build: false,",
	} {
		if !strings.Contains(files[path], want) {
			t.Errorf("%s lacks %q:\n%s", path, want, files[path])
		}
	}
	if !strings.Contains(files["apps/web/vx.project.ts"], "build: { command: 'vite build', outputs: ['//dist/apps/web/**'] },") {
		t.Errorf("apps/web/vx.project.ts:\n%s", files["apps/web/vx.project.ts"])
	}
	root := files["vx.project.ts"]
	for _, want := range []string{"clean: { command: 'npm run clean', cache: false, all: false },", "'lint:root':", "'format-check':"} {
		if !strings.Contains(root, want) {
			t.Errorf("vx.project.ts lacks %q:\n%s", want, root)
		}
	}
	if strings.Contains(root, "run-many") || strings.Contains(root, "build") {
		t.Errorf("a root script that runs nx became a task:\n%s", root)
	}
	for _, note := range []string{
		"Nx runtime inputs were not translated",
		"Nx externalDependencies inputs were not translated",
		"Nx hashes the compilerOptions of the root tsconfig.base.json into every task's hash: '//tsconfig.base.json' became globalInputs",
	} {
		if !hasNote(p, note) {
			t.Errorf("no note %q in %q", note, p.Notes)
		}
	}
	if hasNote(p, "tsconfig.base.json is extended by") {
		t.Errorf("the extends note fired for a globalInput: %q", p.Notes)
	}
}

func TestInitLongRunningAndCleanup(t *testing.T) {
	for _, tc := range []struct {
		name, cmd string
		long      bool
	}{
		{"dev", "anything", true},
		{"build", "vite build", false},
		{"build", "tsc -p . && vite build --mode production", false},
		{"web", "vite --host 0.0.0.0 --port 3001", true},
		{"preview:site", "vite preview", true},
		{"api", "nodemon --exec \"node -r esbuild-register ./src/index.ts\" -e .ts", true},
		{"app", "next dev --port 3002", true},
		{"build", "next build", false},
		{"build:watch", "tsup --watch", true},
		{"compile", "tsc -w -p .", true},
		{"ws", "pnpm -w run build", false},
		{"docs", "storybook dev -p 6006", true},
		{"docs", "storybook build", false},
		{"test", "vitest run", false},
		{"test:ci", "cross-env CI=1 jest --watchAll=false", false},
		{"test:w", "jest --watchAll", true},
		{"api", "NODE_ENV=development tsx watch src/index.ts", true},
	} {
		if got := isLongRunning(tc.name, tc.cmd); got != tc.long {
			t.Errorf("isLongRunning(%q, %q) = %v", tc.name, tc.cmd, got)
		}
	}
	for _, tc := range []struct {
		name, cmd string
		clean     bool
	}{
		{"clean", "anything", true},
		{"clean:dist", "echo", true},
		{"reset", "rimraf dist .turbo", true},
		{"wipe", "rm -rf dist && rm -rf .next", true},
		{"purge", "git clean -xdf", true},
		{"nuke", "npx del-cli dist", true},
		{"build", "rimraf dist && tsc", false},
		{"build", "rm dist/x.js", false},
		{"fmt", "", false},
	} {
		if got := isCleanup(tc.name, tc.cmd); got != tc.clean {
			t.Errorf("isCleanup(%q, %q) = %v", tc.name, tc.cmd, got)
		}
	}
}

// TestInitTurboConfigPlaces finds the Turborepo config as turbo.jsonc, or where a script's
// --root-turbo-json names it (in either spelling), over a turbo.json at the root.
func TestInitTurboConfigPlaces(t *testing.T) {
	pkgs := map[string]string{
		"packages/a/package.json": `{"name": "a", "scripts": {"build": "tsc"}}`,
		"package-lock.json":       `{}`,
	}
	for name, tc := range map[string]struct {
		script, file string
	}{
		"jsonc":        {"", "turbo.jsonc"},
		"flag space":   {"turbo --root-turbo-json cfg/turbo.json", "cfg/turbo.json"},
		"flag equals":  {"turbo run build --root-turbo-json=\"cfg/turbo.jsonc\" --summarize", "cfg/turbo.jsonc"},
		"flag missing": {"turbo run build --root-turbo-json=cfg/none.json", "turbo.jsonc"},
	} {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{
				"package.json": `{"workspaces": ["packages/*"], "scripts": {"t": ` + jsonString(tc.script) + `}}`,
				tc.file:        `{"tasks": {"build": {"outputs": ["dist/**"],},},} // JSONC`,
			}
			if tc.file != "turbo.jsonc" {
				files["turbo.jsonc"] = `{"tasks": {}}`
			}
			for k, v := range pkgs {
				files[k] = v
			}
			p, planned := planFiles(t, writeFiles(t, files))
			if p.Mode != ModeTurbo {
				t.Fatalf("mode %s", p.Mode)
			}
			ws := planned["vx.workspace.ts"]
			if !strings.Contains(ws, "from "+tc.file+",") || !strings.Contains(ws, "outputs: ['dist/**']") {
				t.Errorf("vx.workspace.ts:\n%s", ws)
			}
		})
	}
}

func jsonString(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}

// TestInitTurboRootTasks covers root tasks: a task of the root project with the root script, a
// dependency on one, and a root task whose script runs turbo itself.
func TestInitTurboRootTasks(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"package.json": `{"name": "mono", "workspaces": ["packages/*"],
			"scripts": {"build": "turbo run build", "format": "prettier --check .", "check": "turbo run check"}}`,
		"pnpm-lock.yaml": "",
		"turbo.json": `{"tasks": {
			"build": {"dependsOn": ["^build", "//#format"]},
			"//#format": {"outputs": []},
			"//#check": {},
			"//#missing": {}
		}}`,
		"packages/a/package.json": `{"name": "a", "scripts": {"build": "tsc"}}`,
	})
	p, files := planFiles(t, dir)
	if !strings.Contains(files["vx.workspace.ts"], "projects: ['.', 'packages/*'],") ||
		!strings.Contains(files["vx.workspace.ts"], "dependsOn: ['^build', 'mono#format'],") {
		t.Errorf("vx.workspace.ts:\n%s", files["vx.workspace.ts"])
	}
	root := files["vx.project.ts"]
	if !strings.Contains(root, "format: { command: 'pnpm run format' },") || strings.Contains(root, "check") || strings.Contains(root, "build") {
		t.Errorf("vx.project.ts:\n%s", root)
	}
	if !slices.ContainsFunc(p.Todos, func(td Todo) bool { return td.Key == "tasks.//#check" }) {
		t.Errorf("no todo for the root task that runs turbo: %+v", p.Todos)
	}
	if !hasNote(p, "root tasks left out: the root package.json has no script of their name: //#missing") {
		t.Errorf("notes: %q", p.Notes)
	}
}

// TestInitProjectGlobs keeps the workspace globs (one that matches nothing yet too), excludes what vx
// alone would take for a project and keeps the declared exclusions; a glob that mostly matches
// other folders gives way to the folders.
func TestInitProjectGlobs(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"package.json":                  `{"workspaces": {"packages": ["apps/*", "packages/*", "tools/**", "libs/*", "!packages/old"]}}`,
		"apps/a/package.json":           `{"name": "a"}`,
		"apps/b/package.json":           `{"name": "b"}`,
		"apps/notes/README.md":          "",
		"packages/c/package.json":       `{"name": "c"}`,
		"packages/old/package.json":     `{"name": "old"}`,
		"tools/cli/package.json":        `{"name": "cli"}`,
		"tools/cli/src/main.ts":         "",
		"tools/cli/test/fixtures/x.txt": "",
	})
	p, files := planFiles(t, dir)
	want := "projects: ['apps/*', 'packages/*', 'tools/cli', 'libs/*', '!packages/old', '!apps/notes'],"
	if !strings.Contains(files["vx.workspace.ts"], want) {
		t.Errorf("want %s in\n%s", want, files["vx.workspace.ts"])
	}
	if len(p.Projects) != 4 {
		t.Errorf("projects: %+v", p.Projects)
	}
}

// TestInitTodosGrouped gives one todo for a finding in several projects, naming them.
func TestInitTodosGrouped(t *testing.T) {
	files := map[string]string{"nx.json": `{}`, "package.json": `{"name": "r"}`}
	for _, n := range []string{"a", "b", "c"} {
		files["libs/"+n+"/project.json"] = `{"name": "` + n + `", "targets": {"build": {"executor": "@nx/js:tsc"}}}`
	}
	p, _ := planFiles(t, writeFiles(t, files))
	var got []Todo
	for _, td := range p.Todos {
		if td.Key == "targets.build.executor" {
			got = append(got, td)
		}
	}
	if len(got) != 1 || strings.Join(got[0].Projects, ",") != "a,b,c" || got[0].File != "libs/a/project.json" {
		t.Fatalf("todos: %+v", p.Todos)
	}
	var text strings.Builder
	if err := p.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "(3 projects: a, b, c)") {
		t.Errorf("text:\n%s", text.String())
	}
}

// TestInitNxInputForms covers the Nx input forms one at a time.
func TestInitNxInputForms(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"package.json": `{"name": "r"}`,
		"nx.json": `{"namedInputs": {"src": ["{projectRoot}/src/**/*", {"env": "MODE"}]},
			"targetDefaults": {"build": {"cache": true}}}`,
		"libs/a/project.json": `{"name": "a", "targets": {
			"whole": {"command": "true", "cache": true, "inputs": ["{projectRoot}/**/*"]},
			"deps": {"command": "true", "cache": true, "inputs": ["^default", {"env": "CI"}]},
			"named": {"command": "true", "cache": true, "inputs": ["src", "{workspaceRoot}/x.json", {"input": "src", "projects": "dependencies"}]},
			"none": {"command": "true", "cache": true}
		}}`,
	})
	_, files := planFiles(t, dir)
	a := files["libs/a/vx.project.ts"]
	for _, want := range []string{
		"whole: { command: 'cd ../.. && true' },",
		"deps: { command: 'cd ../.. && true', inputs: ['^default'], env: ['CI'] },",
		// {input: 'src', projects: 'dependencies'}: ^src, the named input's globs in each
		// dependency.
		"inputs: ['src/**/*', '//x.json', '^src/**/*'],",
		// No inputs: Nx's DEFAULT_INPUTS, default and ^default.
		"none: { command: 'cd ../.. && true', inputs: ['$default', '^default'] },",
	} {
		if !strings.Contains(a, want) {
			t.Errorf("libs/a/vx.project.ts lacks %q:\n%s", want, a)
		}
	}
}

// TestInitTurboSinglePackage runs turbo.json's tasks in the root when the repository is one package:
// the root project holds them all.
func TestInitTurboSinglePackage(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"package.json":      `{"name": "solo", "scripts": {"build": "tsc", "test": "vitest run", "dev": "tsc -w"}}`,
		"package-lock.json": `{}`,
		"turbo.json":        `{"tasks": {"build": {"outputs": ["dist/**"]}, "test": {"dependsOn": ["build", "lint"]}, "dev": {"persistent": true, "cache": false}}}`,
	})
	p, files := planFiles(t, dir)
	if !strings.Contains(files["vx.workspace.ts"], "projects: ['.'],") || !strings.Contains(files["vx.workspace.ts"], "tasks: {},") {
		t.Errorf("vx.workspace.ts:\n%s", files["vx.workspace.ts"])
	}
	root := files["vx.project.ts"]
	for _, want := range []string{
		"build: { command: 'npm run build', outputs: ['dist/**'] },",
		"test: { command: 'npm run test', dependsOn: ['build'] },",
		"dev: { command: 'npm run dev', cache: false, persistent: true },",
	} {
		if !strings.Contains(root, want) {
			t.Errorf("vx.project.ts lacks %q:\n%s", want, root)
		}
	}
	if hasNote(p, "no package has a script for") {
		t.Errorf("notes: %q", p.Notes)
	}
}

// TestInitTemplateDependsOnNoTask drops from a template a dependency on a task no package has, and
// keeps one some package has (a package without it overrides).
func TestInitTemplateDependsOnNoTask(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"package.json":            `{"workspaces": ["packages/*"]}`,
		"package-lock.json":       `{}`,
		"turbo.json":              `{"tasks": {"build": {}, "test": {"dependsOn": ["build", "codegen"]}, "codegen": {}}}`,
		"packages/a/package.json": `{"name": "a", "scripts": {"build": "tsc", "test": "vitest"}}`,
		"packages/b/package.json": `{"name": "b", "scripts": {"test": "vitest"}}`,
	})
	_, files := planFiles(t, dir)
	if ws := files["vx.workspace.ts"]; !strings.Contains(ws, "test: { command: 'npm run test', dependsOn: ['build'], ifScript: true },") {
		t.Errorf("vx.workspace.ts:\n%s", ws)
	}
	// vx drops an ifScript template's dependsOn on a sibling task a project lacks, as Turborepo
	// does: b needs no config file for it.
	if b, ok := files["packages/b/vx.project.ts"]; ok {
		t.Errorf("packages/b/vx.project.ts written:\n%s", b)
	}
}

// An explicit persistent: false in turbo.json stays false, whatever the task's name.
func TestInitTurboExplicitNotPersistent(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"package.json":            `{"workspaces": ["packages/*"]}`,
		"package-lock.json":       `{}`,
		"turbo.json":              `{"tasks": {"dev": {"cache": false, "persistent": false}, "serve": {"cache": false}}}`,
		"packages/a/package.json": `{"name": "a", "scripts": {"dev": "tsc", "serve": "vite"}}`,
	})
	_, files := planFiles(t, dir)
	ws := files["vx.workspace.ts"]
	if !strings.Contains(ws, "dev: { command: 'npm run dev', cache: false, ifScript: true },") || !strings.Contains(ws, "persistent: true") {
		t.Errorf("vx.workspace.ts:\n%s", ws)
	}
}
