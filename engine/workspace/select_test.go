package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/graph"
)

// filterWorkspace builds, by hand, a workspace of five projects:
//
//	apps/web  (web, tag frontend) → ui → core
//	apps/docs (docs, tags frontend and docs) → ui
//	packages/tool (tool)
//
// each with build (dependsOn ^build), dev (persistent) and clean (all: false) tasks.
func filterWorkspace(root string) *graph.Workspace {
	type proj struct {
		name, dir  string
		tags, deps []string
	}
	ws := &graph.Workspace{Root: root}
	for _, p := range []proj{
		{"web", "apps/web", []string{"frontend"}, []string{"ui"}},
		{"docs", "apps/docs", []string{"frontend", "docs"}, []string{"ui"}},
		{"ui", "packages/ui", nil, []string{"core"}},
		{"core", "packages/core", nil, nil},
		{"tool", "packages/tool", nil, nil},
	} {
		gp := &graph.Project{Name: p.name, Dir: p.dir, AbsDir: filepath.Join(root, p.dir), Tags: p.tags, DependsOn: p.deps,
			Tasks: map[string]*graph.Task{}}
		var buildDeps []string
		for _, d := range p.deps {
			buildDeps = append(buildDeps, graph.TaskID(d, "build"))
		}
		gp.Tasks["build"] = &graph.Task{ID: graph.TaskID(p.name, "build"), Project: p.name, Name: "build", Cache: true, All: true, DependsOn: buildDeps}
		gp.Tasks["dev"] = &graph.Task{ID: graph.TaskID(p.name, "dev"), Project: p.name, Name: "dev", All: true, Persistent: true}
		gp.Tasks["clean"] = &graph.Task{ID: graph.TaskID(p.name, "clean"), Project: p.name, Name: "clean", Cache: true}
		ws.Projects = append(ws.Projects, gp)
	}
	ws.Index()
	return ws
}

// selected answers the projects Select picks for filters, space-separated, or the error.
func selected(t *testing.T, ws *graph.Workspace, filters ...string) (string, error) {
	t.Helper()
	sel, err := Select(context.Background(), ws, SelectOptions{Filters: filters})
	if err != nil {
		return "", err
	}
	return strings.Join(sel.Projects, " "), nil
}

func TestSelectFilterForms(t *testing.T) {
	ws := filterWorkspace(t.TempDir())
	for _, tc := range []struct {
		filters []string
		want    string
	}{
		{nil, "core docs tool ui web"},
		{[]string{"web"}, "web"},
		{[]string{"*o*"}, "core docs tool"},
		{[]string{"tag:frontend"}, "docs web"},
		{[]string{"web..."}, "core ui web"},
		{[]string{"...ui"}, "docs ui web"},
		{[]string{"...ui..."}, "core docs ui web"},
		// dependency-only forms
		{[]string{"web^..."}, "core ui"},
		{[]string{"...^ui"}, "docs web"},
		{[]string{"...^core"}, "docs ui web"},
		{[]string{"tag:frontend^..."}, "core ui"},
		// paths: a folder or a glob of folders, relative to the root; a folder takes the projects below it
		{[]string{"./apps/web"}, "web"},
		{[]string{"./packages/*"}, "core tool ui"},
		{[]string{"./packages"}, "core tool ui"},
		{[]string{"."}, "core docs tool ui web"},
		{[]string{"./apps/web/"}, "web"},
		{[]string{"./apps/*..."}, "core docs ui web"},
		{[]string{"{./apps/docs}"}, "docs"},
		{[]string{"{apps/*}"}, "docs web"},
		{[]string{"{./packages/*}..."}, "core tool ui"},
		{[]string{"...{./packages/core}"}, "core docs ui web"},
		{[]string{"w*{./apps/*}"}, "web"},
		{[]string{"tag:docs{./apps/*}"}, "docs"},
		// exclusions
		{[]string{"!web"}, "core docs tool ui"},
		{[]string{"!web", "!./packages/*"}, "docs"},
		{[]string{"web...", "!core"}, "ui web"},
		{[]string{"!core", "web..."}, "ui web"},
		{[]string{"./apps/*", "!tag:docs"}, "web"},
		{[]string{"!...^core"}, "core tool"},
		{[]string{"!{./apps/*}..."}, "tool"},
		// several add up
		{[]string{"docs", "tool"}, "docs tool"},
	} {
		got, err := selected(t, ws, tc.filters...)
		if err != nil || got != tc.want {
			t.Errorf("--filter %q = %q (err %v), want %q", tc.filters, got, err, tc.want)
		}
	}
}

func TestSelectFilterRefusals(t *testing.T) {
	ws := filterWorkspace(t.TempDir())
	for _, tc := range []struct {
		filter, want string
	}{
		{"", `--filter needs a value`},
		{"nothing-like-this", `--filter "nothing-like-this" matches no project`},
		{"!nothing", `--filter "!nothing" matches no project`},
		{"./apps/none", `--filter "./apps/none" matches no project`},
		{"apps/web", `--filter "apps/web" matches no project name (for the folder, write ./apps/web)`},
		{"core^...", `--filter "core^..." matches no project: core depends on no project`},
		{"...^web", `--filter "...^web" matches no project: web has no dependents`},
		{"../elsewhere", `--filter "../elsewhere": the folder ../elsewhere is outside the workspace`},
		{"...", `--filter "..." names no project`},
		{"!", `--filter "!" names no project`},
		{"web,docs", `--filter "web,docs": unsupported form (a comma-separated list: repeat --filter, once per project)`},
		{"web^", `--filter "web^": unsupported form (^ goes with ...`},
		{"!!web", `--filter "!!web": unsupported form (! goes first, once`},
		{"...!web", `--filter "...!web": unsupported form (! goes first, once`},
		{"{}", `--filter "{}": unsupported form (an empty {}: write {PATH})`},
		{"[]", `--filter "[]": unsupported form (an empty []: write [REF])`},
		{"[main...]", `--filter "[main...]": unsupported form (a range needs both ends`},
		{"......[main]", `--filter "......[main]": unsupported form (...[REF] after a NAME or {PATH} only`},
		{"{a}{b}", `--filter "{a}{b}": unsupported form (one {PATH} and one [REF] at most)`},
		{"[main]web", `--filter "[main]web": unsupported form (write NAME, a glob`},
		{"/abs/path", `--filter "/abs/path": unsupported form (an absolute path`},
		{".hidden", `--filter ".hidden": unsupported form (a path starts with ./ or ../)`},
		{"tag:", `--filter "tag:": tag: needs a tag name`},
		{"[--output=x]", `--filter "[--output=x]": unsupported form (a git ref does not start with -)`},
	} {
		_, err := selected(t, ws, tc.filter)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("--filter %q: err = %v, want %q", tc.filter, err, tc.want)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("--filter %q: err %q is not one line", tc.filter, err)
		}
	}
}

func TestSelectAllLeavesOutPersistentAndNotAll(t *testing.T) {
	ws := filterWorkspace(t.TempDir())
	ctx := context.Background()
	sel, err := Select(ctx, ws, SelectOptions{All: true, Filters: []string{"core"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sel.Requested, " "); got != "core#build" {
		t.Errorf("--all requested %s, want core#build only", got)
	}
	// Named beside --all, they are selected, and only they: --all with task names selects those
	// tasks in every project, never every task.
	sel, err = Select(ctx, ws, SelectOptions{All: true, Tasks: []string{"dev", "core#clean"}, Filters: []string{"core"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sel.Requested, " "); got != "core#clean core#dev" {
		t.Errorf("--all with dev and core#clean requested %s", got)
	}
	sel, err = Select(ctx, ws, SelectOptions{All: true, Tasks: []string{"clean"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sel.Requested, " "); got != "core#clean docs#clean tool#clean ui#clean web#clean" {
		t.Errorf("vx run clean --all requested %s, want clean in every project", got)
	}
}

func TestRebaseFilters(t *testing.T) {
	got, err := RebaseFilters([]string{"web", "./web", "..", "../ui...", "!./x/*", "...{./web}[main]", "{../*}", "[HEAD^]", "bad,form"}, "apps")
	want := []string{"web", "./apps/web", ".", "./ui...", "!./apps/x/*", "...{./apps/web}[main]", "{./*}", "[HEAD^]", "bad,form"}
	if err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("RebaseFilters from apps = %q (err %v), want %q", got, err, want)
	}
	if got, err := RebaseFilters([]string{"./x"}, "."); err != nil || got[0] != "./x" {
		t.Errorf("RebaseFilters from the root changed ./x to %s (err %v)", got[0], err)
	}
	if _, err := RebaseFilters([]string{"web", "!{../../../x}"}, "apps/web"); err == nil ||
		err.Error() != `--filter "!{../../../x}": the folder ../../../x is outside the workspace` {
		t.Errorf("a folder outside the workspace: err = %v", err)
	}
	ws := filterWorkspace(t.TempDir())
	rebased, err := RebaseFilters([]string{"../ui"}, "packages/core")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := selected(t, ws, rebased...); err != nil || got != "ui" {
		t.Errorf("../ui from packages/core = %q (err %v), want ui", got, err)
	}
}

// gitRepo makes root a git repository with one commit of everything in it.
func gitRepo(t *testing.T, root string, args ...[]string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for _, argv := range args {
		cmd := exec.Command("git", argv...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=vx", "GIT_AUTHOR_EMAIL=vx@example.com",
			"GIT_COMMITTER_NAME=vx", "GIT_COMMITTER_EMAIL=vx@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+root)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(argv, " "), err, out)
		}
	}
}

func TestSelectGitRange(t *testing.T) {
	root := t.TempDir()
	ws := filterWorkspace(root)
	files := map[string]string{ConfigFileName: "export default {}\n"}
	for _, p := range ws.Projects {
		files[p.Dir+"/src.txt"] = "one\n"
	}
	writeTree(t, root, files)
	gitRepo(t, root, []string{"init", "-q", "-b", "main"}, []string{"add", "-A"}, []string{"commit", "-q", "-m", "one"})
	writeTree(t, root, map[string]string{"packages/ui/src.txt": "two\n"})
	gitRepo(t, root, []string{"commit", "-q", "-am", "ui"}, []string{"tag", "ui-change"})
	writeTree(t, root, map[string]string{"packages/tool/src.txt": "two\n"})
	gitRepo(t, root, []string{"commit", "-q", "-am", "tool"})
	for _, tc := range []struct {
		filters []string
		want    string
	}{
		{[]string{"[HEAD^]"}, "tool"},
		{[]string{"[HEAD~2]"}, "tool ui"},
		{[]string{"...[HEAD~2]"}, "docs tool ui web"},
		{[]string{"[HEAD~2]..."}, "core tool ui"},
		{[]string{"...^[HEAD~2]"}, "docs web"},
		{[]string{"{./packages/*}[HEAD~2]"}, "tool ui"},
		{[]string{"tag:frontend[HEAD~2]..."}, "-"},
		{[]string{"web...[HEAD~2]"}, "web"},
		{[]string{"./apps/*...[HEAD~2]"}, ""},
		{[]string{"{./apps/*}...[HEAD~2]"}, "docs web"},
		{[]string{"[HEAD~2...ui-change]"}, "ui"},
		{[]string{"web[HEAD]"}, "-"},
		{[]string{"!tool", "...[HEAD~2]"}, "docs ui web"},
	} {
		got, err := selected(t, ws, tc.filters...)
		if tc.want == "" {
			if err == nil {
				t.Errorf("--filter %q = %q, want a refusal", tc.filters, got)
			}
			continue
		}
		if tc.want == "-" {
			tc.want = "" // nothing changed: no project, and no refusal
		}
		if err != nil || got != tc.want {
			t.Errorf("--filter %q = %q (err %v), want %q", tc.filters, got, err, tc.want)
		}
	}
	// An uncommitted change and an untracked file count, as under --affected.
	writeTree(t, root, map[string]string{"packages/core/src.txt": "two\n", "apps/docs/new.txt": "new\n"})
	if got, err := selected(t, ws, "[HEAD]"); err != nil || got != "core docs" {
		t.Errorf("--filter [HEAD] with uncommitted changes = %q (err %v), want core docs", got, err)
	}
	for _, tc := range []struct{ filter, want string }{
		{"[no-such-ref]", `--filter "[no-such-ref]": no such git ref`},
		{"[HEAD...no-such-ref]", `--filter "[HEAD...no-such-ref]": no such git ref no-such-ref`},
	} {
		if _, err := selected(t, ws, tc.filter); err == nil || err.Error() != tc.want {
			t.Errorf("--filter %q: err = %v, want %q", tc.filter, err, tc.want)
		}
	}
	testSelectNothingAffected(t, ws)
}

// testSelectNothingAffected: in ws, core and docs changed since HEAD (uncommitted), nothing else.
// A selection narrowed by git to no task answers none, saying since when; an unknown task is
// still refused.
func testSelectNothingAffected(t *testing.T, ws *graph.Workspace) {
	ctx := context.Background()
	for _, tc := range []struct {
		opts SelectOptions
		want string // NothingAffected
		ids  string
	}{
		{SelectOptions{Tasks: []string{"build"}, Filters: []string{"web[HEAD]"}}, "nothing affected since HEAD", ""},
		{SelectOptions{Tasks: []string{"build"}, Filters: []string{"tool[HEAD]", "web[HEAD~1]"}}, "nothing affected since HEAD, HEAD~1", ""},
		{SelectOptions{All: true, Filters: []string{"tool"}, Affected: true, AffectedRef: "HEAD"}, "nothing affected since HEAD", ""},
		{SelectOptions{Tasks: []string{"build"}, Filters: []string{"tool"}, Affected: true, AffectedRef: "HEAD"}, "nothing affected since HEAD", ""},
		{SelectOptions{Tasks: []string{"build"}, Filters: []string{"[HEAD]", "tool"}}, "", "core#build tool#build ui#build docs#build"},
		{SelectOptions{Tasks: []string{"build"}, Filters: []string{"core[HEAD]"}}, "", "core#build"},
		{SelectOptions{Filters: []string{"core[HEAD]"}}, "", ""},
		{SelectOptions{Filters: []string{"web[HEAD]"}}, "nothing affected since HEAD", ""},
	} {
		sel, err := Select(ctx, ws, tc.opts)
		if err != nil || sel.NothingAffected != tc.want || strings.Join(sel.TaskIDs, " ") != tc.ids {
			t.Errorf("Select(%+v) = %+v (err %v), want NothingAffected %q and tasks %q", tc.opts, sel, err, tc.want, tc.ids)
		}
	}
	for _, opts := range []SelectOptions{
		{Tasks: []string{"nosuch"}, Filters: []string{"web[HEAD]"}},
		{Tasks: []string{"web#nosuch"}, Affected: true, AffectedRef: "HEAD"},
	} {
		if _, err := Select(ctx, ws, opts); err == nil || !strings.Contains(err.Error(), "unknown task") {
			t.Errorf("Select(%+v): err = %v, want an unknown task refused", opts, err)
		}
	}
	// Not narrowed by git, a filter whose projects lack the task is still refused.
	if _, err := Select(ctx, ws, SelectOptions{Tasks: []string{"build"}, Filters: []string{"nosuchproject"}}); err == nil {
		t.Errorf("Select(build --filter nosuchproject) = nil error, want a refusal")
	}
}

// A task, task id, project or tag that is not there, but near one that is, is refused with a hint.
func TestSelectHints(t *testing.T) {
	ws := filterWorkspace(t.TempDir())
	for _, tc := range []struct {
		opts SelectOptions
		want string
	}{
		{SelectOptions{Tasks: []string{"biuld"}}, `unknown task "biuld": no project declares it (did you mean build?)`},
		{SelectOptions{Tasks: []string{"web#biuld"}}, `unknown task "web#biuld" (did you mean web#build?)`},
		{SelectOptions{Tasks: []string{"deploy"}}, `unknown task "deploy": no project declares it`},
		{SelectOptions{Tasks: []string{"build"}, Filters: []string{"wbe"}}, `--filter "wbe" matches no project (did you mean web?)`},
		{SelectOptions{Tasks: []string{"build"}, Filters: []string{"tag:fronted"}}, `--filter "tag:fronted" matches no project (did you mean tag:frontend?)`},
		{SelectOptions{Tasks: []string{"build"}, Filters: []string{"wbe*"}}, `--filter "wbe*" matches no project`},
	} {
		if _, err := Select(t.Context(), ws, tc.opts); err == nil || err.Error() != tc.want {
			t.Errorf("Select(%+v): %v, want %q", tc.opts, err, tc.want)
		}
	}
}

// TestSelectNameGlobCrossesScope: a name glob matches scoped names as pnpm's and Turborepo's
// --filter do, `*` crossing the scope's `/`: `--filter '*'` selects every project of a workspace
// whose packages are scoped (it selected none of them, so `vx run check-exports --filter '*'`
// refused a task that only scoped packages have).
func TestSelectNameGlobCrossesScope(t *testing.T) {
	root := t.TempDir()
	ws := &graph.Workspace{Root: root}
	for _, name := range []string{"@acme/core", "@acme/ui", "tool"} {
		dir := "packages/" + strings.TrimPrefix(name, "@acme/")
		ws.Projects = append(ws.Projects, &graph.Project{Name: name, Dir: dir, AbsDir: filepath.Join(root, dir),
			Tasks: map[string]*graph.Task{"build": {ID: graph.TaskID(name, "build"), Project: name, Name: "build", All: true}}})
	}
	ws.Index()
	for _, tc := range []struct{ filter, want string }{
		{"*", "@acme/core @acme/ui tool"},
		{"@acme/*", "@acme/core @acme/ui"},
		{"*ui", "@acme/ui"},
		{"*o*", "@acme/core tool"},
		{"@acme/c?re", "@acme/core"},
		{"!*/ui", "@acme/core tool"},
	} {
		got, err := selected(t, ws, tc.filter)
		if err != nil || got != tc.want {
			t.Errorf("--filter %q: %q, %v; want %q", tc.filter, got, err, tc.want)
		}
	}
}
