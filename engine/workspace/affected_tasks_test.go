package workspace

import (
	"strings"
	"testing"

	"github.com/vzn/vx/engine/graph"
)

// taskWorkspace is a workspace made by hand: lib, app (depending on lib) and the root project,
// with tasks whose inputs take each form.
func taskWorkspace() *graph.Workspace {
	ws := &graph.Workspace{Root: "/w", GlobalInputs: []string{"//tsconfig.base.json"}}
	project := func(name, dir string, deps ...string) *graph.Project {
		p := &graph.Project{Name: name, Dir: dir, DependsOn: deps, Tasks: map[string]*graph.Task{}}
		ws.Projects = append(ws.Projects, p)
		return p
	}
	task := func(p *graph.Project, name string, inputs, outputs []string, deps ...string) {
		p.Tasks[name] = &graph.Task{ID: p.Name + "#" + name, Project: p.Name, Name: name, Command: "true",
			Inputs: inputs, Outputs: outputs, DependsOn: deps}
	}
	root := project("root", ".")
	lib := project("lib", "packages/lib")
	app := project("app", "packages/app", "lib")
	task(root, "lint", nil, nil)
	task(lib, "build", []string{"src/**"}, []string{"dist/**"})
	task(lib, "lint", nil, []string{"dist/**"})
	task(app, "build", []string{"src/**", "//shared/*.json"}, nil, "lib#build")
	task(app, "test", []string{"$default", "!**/*.md"}, nil)
	task(app, "types", []string{"src/**", "^src/**"}, nil)
	ws.Index()
	return ws
}

func affectedIDs(t *testing.T, files ...string) string {
	t.Helper()
	got, err := affectedTasks(taskWorkspace(), files, "main")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, id := range taskWorkspace().TaskIDs() {
		if _, ok := got[id]; ok {
			ids = append(ids, id)
		}
	}
	return strings.Join(ids, " ")
}

// A task is affected by the files its own inputs take, by path, and through the tasks it depends on.
func TestAffectedTasks(t *testing.T) {
	for _, tc := range []struct {
		files []string
		want  string
	}{
		{[]string{"packages/lib/src/a.ts"}, "app#build app#types lib#build lib#lint"},
		{[]string{"packages/lib/README.md"}, "lib#lint"},
		{[]string{"packages/lib/dist/a.js"}, ""},
		{[]string{"packages/app/README.md"}, ""},
		{[]string{"packages/app/index.ts"}, "app#test"},
		{[]string{"packages/app/package.json"}, "app#build app#test app#types"},
		{[]string{"shared/x.json"}, "app#build root#lint"},
		{[]string{"README.md"}, "root#lint"},
		{[]string{"tsconfig.base.json"}, "app#build app#test app#types lib#build lib#lint root#lint"},
		{[]string{"vx.workspace.ts"}, "app#build app#test app#types lib#build lib#lint root#lint"},
		{[]string{".vx/runs/x.json"}, ""},
	} {
		if got := affectedIDs(t, tc.files...); got != tc.want {
			t.Errorf("%v: affected %q, want %q", tc.files, got, tc.want)
		}
	}
	got, _ := affectedTasks(taskWorkspace(), []string{"packages/lib/src/a.ts"}, "main")
	if got["lib#build"] != "packages/lib/src/a.ts changed since main" || got["app#build"] != "depends on lib#build, which is affected" {
		t.Errorf("reasons: %v", got)
	}
}
