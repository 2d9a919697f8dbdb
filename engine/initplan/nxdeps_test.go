package initplan

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/workspace"
)

// nxColonFixture is an Nx workspace whose dependsOn use colons in every form: a project literally
// named test (so "test:clean-post" is its target), targets of one project whose names hold colons
// ("e2e:prep", quoted or not), a project-qualified target with a colon ("lib:gen:types"), a
// string naming a target that exists nowhere ("test:clean-post:prod": Nx reads no configuration
// there), ^ and object forms, a target pattern ("lint:*"), an nx:noop gatherer, target defaults
// keyed by name and by pattern, and a .nxignore whose negation brings one folder back.
var nxColonFixture = map[string]string{
	".gitignore":   "node_modules\n",
	"package.json": `{"name": "root", "private": true, "workspaces": ["packages/*"]}`,
	"nx.json": `{"targetDefaults": {
		"build": {"dependsOn": ["^gen:types", "gen:types"]},
		"e2e:*": {"dependsOn": ["build"]}}}`,
	".nxignore":                  "# projects Nx does not read\npackages/*-old/\n!packages/keep-old/\n",
	"packages/test/package.json": `{"name": "test", "scripts": {"clean-post": "echo t-clean"}}`,
	"packages/lib/package.json":  `{"name": "lib", "scripts": {"build": "echo lib-build", "gen:types": "echo types"}}`,
	"packages/app/package.json":  `{"name": "app", "dependencies": {"lib": "*"}, "scripts": {"build": "echo app-build", "lint:fix": "echo fix", "e2e:prep": "echo prep"}}`,
	"packages/app/project.json": `{"name": "app", "targets": {
		"e2e:run": {"command": "echo e2e", "dependsOn": ["\"e2e:prep\"", "test:clean-post", "app:build"]},
		"test:unit": {"command": "echo unit", "dependsOn": ["lib:gen:types"]},
		"check:all": {"executor": "nx:noop", "dependsOn": ["e2e:run", {"target": "lint:fix"},
			{"projects": ["lib"], "target": "gen:types"}, {"dependencies": true, "target": "build"},
			{"projects": ["app"], "target": "test:unit"}, "lint:*"]},
		"release": {"command": "echo rel", "dependsOn": ["test:clean-post:prod"]}}}`,
	"packages/legacy-old/project.json": `{"name": "legacy", "targets": {"x": {"command": "echo x"}}}`,
	"packages/keep-old/project.json":   `{"name": "keep", "targets": {"y": {"command": "echo y", "dependsOn": ["test:clean-post"]}}}`,
}

// nxColonEdges are the task graph edges Nx draws for nxColonFixture (its task runner's
// readProjectAndTargetFromTargetString, normalizeDependencyConfigDefinition and target defaults).
var nxColonEdges = map[string][]string{
	"app#build":       {"lib#gen:types"},
	"app#check:all":   {"app#e2e:run", "app#lint:fix", "app#test:unit", "lib#build", "lib#gen:types"},
	"app#e2e:prep":    {"app#build"},
	"app#e2e:run":     {"app#build", "app#e2e:prep", "test#clean-post"},
	"app#lint:fix":    nil,
	"app#release":     nil,
	"app#test:unit":   {"lib#gen:types"},
	"keep#y":          {"test#clean-post"},
	"lib#build":       {"lib#gen:types"},
	"lib#gen:types":   nil,
	"test#clean-post": nil,
}

// initEdges plans dir with vx init, loads the written config as vx does and answers every task's
// dependencies.
func initEdges(t *testing.T, dir string) (*Plan, map[string][]string) {
	t.Helper()
	p, err := Init(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.NewLoader(workspace.Options{Dir: dir, Getenv: func(string) string { return "" }}).Load(context.Background())
	if err != nil {
		t.Fatalf("the written config does not load: %v", err)
	}
	edges := map[string][]string{}
	for _, id := range ws.TaskIDs() {
		task, _ := ws.Task(id)
		edges[id] = task.DependsOn
	}
	return p, edges
}

// diffEdges lists the edges one graph has and the other lacks.
func diffEdges(got, want map[string][]string) []string {
	var diff []string
	for _, id := range slices.Sorted(maps.Keys(want)) {
		if _, ok := got[id]; !ok {
			diff = append(diff, "missing task "+id)
		}
		for _, d := range want[id] {
			if !slices.Contains(got[id], d) {
				diff = append(diff, "missing "+id+" → "+d)
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[id]; !ok {
			diff = append(diff, "extra task "+id)
		}
		for _, d := range got[id] {
			if !slices.Contains(want[id], d) {
				diff = append(diff, "extra "+id+" → "+d)
			}
		}
	}
	return diff
}

// TestInitNxColonTargets: every dependsOn form with colons resolves as Nx resolves it, so the task
// graph vx init writes has exactly Nx's edges; the folder .nxignore ignores is no project and the
// one its negation brings back is.
func TestInitNxColonTargets(t *testing.T) {
	dir := writeFiles(t, nxColonFixture)
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	p, edges := initEdges(t, dir)
	if diff := diffEdges(edges, nxColonEdges); diff != nil {
		t.Errorf("vx init's task graph differs from Nx's:\n%s", strings.Join(diff, "\n"))
	}
	if !hasNote(p, "nx:noop targets became tasks") || !hasNote(p, "app#check:all") {
		t.Errorf("notes: %q", p.Notes)
	}
	if !hasNote(p, "app#release → test#clean-post:prod") {
		t.Errorf("the reference to a target no project has is not noted: %q", p.Notes)
	}
}

// TestInitNxLostEdgeIsTodo: a dependency on a target vx cannot translate (an executor it has no
// equivalent of), named or reached through ^, or on one a plugin may infer, is a todo naming the
// edge, never dropped silently.
func TestInitNxLostEdgeIsTodo(t *testing.T) {
	files := map[string]string{
		"package.json":              `{"name": "root", "workspaces": ["packages/*"]}`,
		"nx.json":                   `{"plugins": ["@nx/vite/plugin"]}`,
		"packages/api/package.json": `{"name": "api"}`,
		"packages/app/package.json": `{"name": "app", "dependencies": {"api": "*"}}`,
		"packages/api/project.json": `{"name": "api", "targets": {"deploy:prod": {"executor": "@acme/deploy:run"}}}`,
		"packages/app/project.json": `{"name": "app", "targets": {
			"ship": {"command": "echo ship", "dependsOn": ["api:deploy:prod", "test:vite", "^deploy:prod"]}}}`,
	}
	p, _ := planFiles(t, writeFiles(t, files))
	var msgs []string
	for _, td := range p.Todos {
		msgs = append(msgs, td.File+" "+td.Key+": "+td.Message)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		"packages/app/project.json targets.ship.dependsOn: app#ship depends on api#deploy:prod, a target vx did not translate",
		"packages/app/project.json targets.ship.dependsOn: app#ship depends on test:vite, which no config declares: if a plugin of nx.json infers it",
		"packages/app/project.json targets.ship.dependsOn: app#ship depends on api#deploy:prod (through ^deploy:prod), a target vx did not translate",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("todos lack %q:\n%s", want, all)
		}
	}
}

// TestInitNxTargetNamesVxRefuses: a target whose name vx cannot hold (a space, #) is a todo, not
// a config that fails to load, and an edge to it is a todo too; params: forward is noted.
func TestInitNxTargetNamesVxRefuses(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"package.json":              `{"name": "root", "workspaces": ["packages/*"]}`,
		"nx.json":                   `{}`,
		"packages/app/package.json": `{"name": "app"}`,
		"packages/app/project.json": `{"name": "app", "targets": {
			"run e2e": {"command": "echo e2e"},
			"a#b": {"command": "echo ab"},
			"ci": {"command": "echo ci", "dependsOn": ["run e2e", {"target": "build", "params": "forward"}]},
			"build": {"command": "echo build"}}}`,
	})
	p, edges := initEdges(t, dir)
	if got := edges["app#ci"]; !slices.Equal(got, []string{"app#build"}) {
		t.Errorf("app#ci depends on %v, want app#build", got)
	}
	var msgs []string
	for _, td := range p.Todos {
		msgs = append(msgs, td.Key+": "+td.Message)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		`targets.run e2e: the target name "run e2e" has a character vx task names cannot hold`,
		`targets.a#b: the target name "a#b" has a character`,
		`targets.ci.dependsOn: "run e2e": the target "run e2e" has a character vx task names cannot hold`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("todos lack %q:\n%s", want, all)
		}
	}
	if !hasNote(p, "dependsOn params: forward is not translated") {
		t.Errorf("notes: %q", p.Notes)
	}
}

// TestNxReadTargetString: the part before the first colon is a project only when one has that
// name; a quoted part keeps its colons.
func TestNxReadTargetString(t *testing.T) {
	isProject := func(p string) bool { return p == "test" || p == "lib" }
	cases := []struct {
		in, target string
		project    string
	}{
		{"build", "build", ""},
		{"test:clean-post", "clean-post", "test"},
		{"lib:gen:types", "gen:types", "lib"},
		{"e2e:prep", "e2e:prep", ""},
		{`"e2e:prep"`, "e2e:prep", ""},
		{`lib:"a:b"`, "a:b", "lib"},
		{"test:clean-post:prod", "clean-post:prod", "test"},
	}
	for _, c := range cases {
		d := nxReadTargetString(c.in, isProject)
		project := ""
		if d.projects != nil {
			project = d.projects[0]
		}
		if d.target != c.target || project != c.project {
			t.Errorf("%s: target %q of %q, want %q of %q", c.in, d.target, project, c.target, c.project)
		}
	}
}

// TestIgnoreRules: .gitignore syntax as Nx reads .nxignore: anchored and floating patterns,
// folder-only patterns, and a negation that brings a folder back but nothing under an ignored one.
func TestIgnoreRules(t *testing.T) {
	rules := parseIgnore("# c\npackages/*-old/\n!packages/keep-old/\ntmp\n/only-root.json\n\\#hash\n")
	cases := []struct {
		rel   string
		isDir bool
		want  bool
	}{
		{"packages/a-old", true, true},
		{"packages/a-old/project.json", false, true},
		{"packages/keep-old", true, false},
		{"packages/keep-old/project.json", false, false},
		{"packages/a-old", false, false}, // a file of that name: the pattern names folders
		{"apps/x/tmp/project.json", false, true},
		{"only-root.json", false, true},
		{"apps/only-root.json", false, false},
		{"#hash", false, true},
		{"packages/app/project.json", false, false},
	}
	for _, c := range cases {
		if got := rules.ignored(c.rel, c.isDir); got != c.want {
			t.Errorf("ignored(%q, dir %v) = %v, want %v", c.rel, c.isDir, got, c.want)
		}
	}
}

// nxVersion is the Nx the comparison runs, pinned (checked with npm view nx version), installed
// once into the user's cache folder outside the checkout.
const nxVersion = "24.0.7"

// nxCLI installs nx (once) under ~/.cache/vx-test and returns the path of its bin; the test is
// skipped, saying why, only where npm cannot install it.
func nxCLI(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("installs nx (a minute the first time): not in -short; TestInitNxColonTargets checks the same edges")
	}
	base, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "vx-test", "nx-"+nxVersion)
	exe := filepath.Join(dir, "node_modules", ".bin", "nx")
	if _, err := os.Stat(exe); err == nil {
		return exe
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed, so nx cannot be: TestInitNxColonTargets checks the same edges")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", dir, "nx@"+nxVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("npm cannot install nx here (%v): TestInitNxColonTargets checks the same edges\n%s", err, out)
	}
	return exe
}

// nxTaskGraph asks Nx for the task graph of every target of dir's projects (nx run-many
// --graph, which runs nothing) and answers its edges as vx task ids.
func nxTaskGraph(t *testing.T, nx, dir string, targets []string) map[string][]string {
	t.Helper()
	cmd := exec.Command(nx, "run-many", "--all", "--targets="+strings.Join(targets, ","), "--graph=nx-graph.json")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NX_DAEMON=false", "NX_NO_CLOUD=true", "NX_SKIP_NX_CACHE=true", "NX_TUI=false", "NX_ISOLATE_PLUGINS=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nx run-many --graph: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "nx-graph.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tasks struct {
			Tasks map[string]struct {
				Target struct{ Project, Target string } `json:"target"`
			} `json:"tasks"`
			Dependencies map[string][]json.RawMessage `json:"dependencies"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("read nx-graph.json: %v\n%s", err, data)
	}
	id := func(nxID string) string {
		task := doc.Tasks.Tasks[nxID]
		return task.Target.Project + "#" + task.Target.Target
	}
	edges := map[string][]string{}
	for nxID := range doc.Tasks.Tasks {
		deps := []string{}
		for _, d := range doc.Tasks.Dependencies[nxID] {
			// A dependency is its task id, or (newer Nx) an object holding it.
			var dep struct{ ID string }
			if json.Unmarshal(d, &dep.ID) != nil && json.Unmarshal(d, &dep) != nil {
				t.Fatalf("nx-graph.json: a dependency of %s vx cannot read: %s", nxID, d)
			}
			deps = append(deps, id(dep.ID))
		}
		slices.Sort(deps)
		if len(deps) == 0 {
			deps = nil
		}
		edges[id(nxID)] = deps
	}
	return edges
}

// TestInitNxEdgesMatchNx: on nxColonFixture and nxProjectPatternsFixture, the task graph vx
// init writes has every edge Nx's own task graph has, none missing and none extra, Nx asked
// directly.
func TestInitNxEdgesMatchNx(t *testing.T) {
	nx := nxCLI(t)
	for name, files := range map[string]map[string]string{"colons": nxColonFixture, "projects": nxProjectPatternsFixture} {
		t.Run(name, func(t *testing.T) {
			dir := writeFiles(t, files)
			if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
				t.Fatalf("git init: %v: %s", err, out)
			}
			_, edges := initEdges(t, dir)
			targets := map[string]bool{}
			for id := range edges {
				targets[id[strings.LastIndexByte(id, '#')+1:]] = true
			}
			// Nx runs only from a workspace that has it installed: its node_modules, linked in
			// after vx init has read the workspace.
			modules := filepath.Join(filepath.Dir(filepath.Dir(nx)))
			if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
				t.Fatal(err)
			}
			want := nxTaskGraph(t, nx, dir, slices.Sorted(maps.Keys(targets)))
			if diff := diffEdges(edges, want); diff != nil {
				t.Errorf("vx init's task graph differs from nx's:\n%s", strings.Join(diff, "\n"))
			}
		})
	}
}

// nxProjectPatternsFixture is an Nx workspace of scoped packages whose dependsOn objects name
// projects as Nx's findMatchingProjects reads them: a word of a scoped name ("ui" is @acme/ui, not
// @acme/ui-kit), a tag, a name glob, an exclusion first (every project but those), a folder glob
// no name matches, a name no project has and an empty list (no edge for either).
var nxProjectPatternsFixture = map[string]string{
	".gitignore":                   "node_modules\n",
	"package.json":                 `{"name": "root", "private": true, "workspaces": ["packages/*"]}`,
	"nx.json":                      `{}`,
	"packages/ui/package.json":     `{"name": "@acme/ui", "scripts": {"build": "echo ui"}}`,
	"packages/ui-kit/package.json": `{"name": "@acme/ui-kit", "scripts": {"build": "echo kit"}}`,
	"packages/core/package.json":   `{"name": "@acme/core", "scripts": {"build": "echo core"}}`,
	"packages/core/project.json":   `{"name": "@acme/core", "tags": ["shared"]}`,
	"packages/app/package.json":    `{"name": "app", "scripts": {"build": "echo app"}}`,
	"packages/app/project.json": `{"name": "app", "targets": {
		"word": {"command": "echo w", "dependsOn": [{"projects": ["ui"], "target": "build"}]},
		"tag": {"command": "echo t", "dependsOn": [{"projects": ["tag:shared"], "target": "build"}]},
		"glob": {"command": "echo g", "dependsOn": [{"projects": ["@acme/*"], "target": "build"}]},
		"but": {"command": "echo b", "dependsOn": [{"projects": ["!@acme/*"], "target": "build"}]},
		"folder": {"command": "echo f", "dependsOn": [{"projects": ["packages/ui-*"], "target": "build"}]},
		"none": {"command": "echo n", "dependsOn": [{"projects": ["nosuch"], "target": "build"}, {"projects": [], "target": "build"}]}}}`,
}

// nxProjectPatternsEdges are the edges Nx draws for nxProjectPatternsFixture.
var nxProjectPatternsEdges = map[string][]string{
	"@acme/core#build":   nil,
	"@acme/ui#build":     nil,
	"@acme/ui-kit#build": nil,
	"app#build":          nil,
	"app#word":           {"@acme/ui#build"},
	"app#tag":            {"@acme/core#build"},
	"app#glob":           {"@acme/core#build", "@acme/ui#build", "@acme/ui-kit#build"},
	"app#but":            {"app#build"},
	"app#folder":         {"@acme/ui-kit#build"},
	"app#none":           nil,
}

// TestInitNxProjectPatterns: a dependsOn object's projects resolve as Nx resolves them (on
// supabase-js, {"projects": ["supabase-js"]} is @supabase/supabase-js, which vx init dropped), and
// one that matches no project is a note, as Nx adds no edge for it.
func TestInitNxProjectPatterns(t *testing.T) {
	dir := writeFiles(t, nxProjectPatternsFixture)
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	p, edges := initEdges(t, dir)
	if diff := diffEdges(edges, nxProjectPatternsEdges); diff != nil {
		t.Errorf("vx init's task graph differs from Nx's:\n%s", strings.Join(diff, "\n"))
	}
	if len(p.Todos) != 0 {
		t.Errorf("todos: %+v", p.Todos)
	}
	if !hasNote(p, `{"projects": ["nosuch"], "target": "build"}`) {
		t.Errorf("the projects that match nothing are not noted: %q", p.Notes)
	}
}

// TestInitDroppedEdgeSaysWhy: a dependency on a task of a project that does not exist is noted as
// such, apart from one on a task the project named lacks (both notes blamed the task).
func TestInitDroppedEdgeSaysWhy(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		".gitignore":                "node_modules\n",
		"package.json":              `{"name": "root", "private": true, "workspaces": ["packages/*"], "packageManager": "npm@10.0.0"}`,
		"turbo.json":                `{"tasks": {"build": {}, "app#build": {"dependsOn": ["nosuch#build", "ui#nope"]}}}`,
		"packages/ui/package.json":  `{"name": "ui", "scripts": {"build": "echo ui"}}`,
		"packages/app/package.json": `{"name": "app", "scripts": {"build": "echo app"}}`,
	})
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	p, _ := initEdges(t, dir)
	if !hasNote(p, "no project has the name it gives: app#build → nosuch#build") || !hasNote(p, "the project named has no such task: app#build → ui#nope") {
		t.Errorf("notes: %q", p.Notes)
	}
}
