package tools

import (
	"encoding/json"
	"testing"

	"github.com/vzn/vx/engine/show"
)

// listTasks answers show's projects and tasks with the listed fields only, each as show has it.
func TestListOfProjectsShow(t *testing.T) {
	doc := &show.Document{Projects: []show.Project{{
		Name: "app", Dir: "apps/app", NameFrom: "package.json", Tags: []string{"web"}, DependsOn: []string{"lib"},
		Tasks: []show.Task{{ID: "app#build", Name: "build", Command: "tsc", DependsOn: []string{"lib#build"},
			Cache: true, Inputs: []string{"src/**"}, Origins: map[string]string{"command": "vx.workspace.ts:3"}}},
	}}}
	js, err := json.Marshal(listOf(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"projects":[{"name":"app","dir":"apps/app","tags":["web"],"dependsOn":["lib"],"tasks":[{"id":"app#build","name":"build","command":"tsc","dependsOn":["lib#build"],"cache":true,"cached":true}]}],"totalProjects":1}`
	if string(js) != want {
		t.Errorf("listOf = %s\nwant      %s", js, want)
	}
}

// A listed field that is not show's field of that name, type and json tag is refused.
func TestProjectionRefusesAFieldShowLacks(t *testing.T) {
	type renamed struct {
		ID  string `json:"taskId"`
		Cmd string `json:"command"`
	}
	defer func() {
		if recover() == nil {
			t.Fatal("projection of a field show.Task lacks did not panic")
		}
	}()
	projection[renamed, show.Task]()
}
