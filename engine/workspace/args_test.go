package workspace

import (
	"strings"
	"testing"

	"github.com/vzn/vx/engine/graph"
)

func TestAppendArgs(t *testing.T) {
	for _, tc := range []struct {
		command string
		args    []string
		want    string
	}{
		{"vitest run", []string{"--watch=false", "-t", "adds two"}, "vitest run --watch=false -t 'adds two'"},
		{"eslint .\n", []string{"--fix"}, "eslint . --fix"},
		{"sh test.sh", []string{"it's", "", "$HOME", "a;b", "~", "*.ts"}, `sh test.sh 'it'\''s' '' '$HOME' 'a;b' '~' '*.ts'`},
		{"npm run test", []string{"--watch"}, "npm run test -- --watch"},
		{"npm test", []string{"--watch"}, "npm test -- --watch"},
		{"npm --silent run-script lint", []string{"--fix"}, "npm --silent run-script lint -- --fix"},
		{"npm run test -- --ci", []string{"--watch"}, "npm run test -- --ci --watch"},
		{"npm install", []string{"--force"}, "npm install --force"},
		{"CI=1 npm run test", []string{"-u"}, "CI=1 npm run test -- -u"},
		{"npx npm run test", []string{"-u"}, "npx npm run test -- -u"},
		{"tsc -b && npm run test", []string{"-u"}, "tsc -b && npm run test -- -u"},
		{"npm run test 2>&1", []string{"-u"}, "npm run test 2>&1 -- -u"},
		{"npm run build; echo done", []string{"-u"}, "npm run build; echo done -u"},
		{"pnpm test", []string{"--watch"}, "pnpm test --watch"},
		{"pnpm run test", []string{"--", "x"}, "pnpm run test -- x"},
		{"yarn test", []string{"--watch"}, "yarn test --watch"},
		{"yarn test", []string{"--", "--watch"}, "yarn test -- -- --watch"},
		{"bun run test", []string{"--bail"}, "bun run test --bail"},
		{"bun run test", []string{"a", "--", "b"}, "bun run test -- a -- b"},
	} {
		if got := AppendArgs(tc.command, tc.args); got != tc.want {
			t.Errorf("AppendArgs(%q, %q) = %q, want %q", tc.command, tc.args, got, tc.want)
		}
	}
	if got := AppendArgs("make", nil); got != "make" {
		t.Errorf("AppendArgs without args = %q", got)
	}
}

// WithArgs changes the named tasks' commands in a copy; the workspace it was given keeps its own.
func TestWithArgs(t *testing.T) {
	ws := filterWorkspace(t.TempDir())
	for _, p := range ws.Projects {
		p.Tasks["build"].Command = "tsc"
	}
	sel, err := Select(t.Context(), ws, SelectOptions{Tasks: []string{"build"}, Filters: []string{"web"}})
	if err != nil {
		t.Fatal(err)
	}
	named := NamedTasks(sel, SelectOptions{Tasks: []string{"build"}})
	if strings.Join(named, " ") != "web#build" {
		t.Fatalf("named = %q, want web#build (not what it depends on)", named)
	}
	got := WithArgs(ws, named, []string{"--noEmit"})
	for _, tc := range []struct{ id, want string }{{"web#build", "tsc --noEmit"}, {"ui#build", "tsc"}, {"core#build", "tsc"}} {
		if task, ok := got.Task(tc.id); !ok || task.Command != tc.want {
			t.Errorf("%s: %+v, want the command %q", tc.id, task, tc.want)
		}
	}
	if task, _ := ws.Task("web#build"); task.Command != "tsc" {
		t.Errorf("WithArgs changed the workspace it was given: %q", task.Command)
	}
	if a, _ := got.Task("web#dev"); a == nil {
		t.Errorf("the copy lost web#dev")
	} else if b, _ := ws.Task("web#dev"); a != b {
		t.Errorf("the copy copied web#dev, which it does not change")
	}
	if WithArgs(ws, named, nil) != ws {
		t.Error("WithArgs without args made a copy")
	}
	var byID = map[string]*graph.Task{}
	for _, id := range got.TaskIDs() {
		task, _ := got.Task(id)
		byID[id] = task
	}
	if len(byID) != ws.TaskCount() {
		t.Errorf("the copy holds %d tasks, the workspace %d", len(byID), ws.TaskCount())
	}
}
