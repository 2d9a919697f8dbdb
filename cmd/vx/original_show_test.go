package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vzn/vx/internal/testkit"
)

// vx show --format json validates against the original's show.json in each of its four shapes —
// the workspace a list of projects with their task names, a project its tasks' configs by name, a
// project#task that task's config, a task name that task in every project declaring it — with
// vx's resolved tasks beside them.
func TestShowValidatesAgainstTheOriginal(t *testing.T) {
	dir := testkit.TempRepo(t, originalWorkspace)
	// Opened, the project shape would hold a task's answer too (its config's fields are all
	// optional), which oneOf refuses: the original's closed project has no task, and neither here.
	schema := originalSchema(t, "show", "", func(m map[string]any) {
		m["$defs"].(map[string]any)["project"].(map[string]any)["not"] = map[string]any{"required": []any{"task"}}
	})
	type config struct {
		DependsOn []string
		Exec      struct{ Command string }
		Cache     *struct {
			Inputs  struct{ Files []string }
			Outputs struct{ Files []string }
		}
	}
	type taskAnswer struct {
		Name, Dir, Task string
		Config          config
		Resolved        struct{ ID string }
	}

	out := cliJSON(t, dir, "show")
	validateOriginal(t, "vx show", schema, out)
	var rows []struct {
		Name, Dir     string
		Tasks         []string
		ResolvedTasks []struct{ ID string }
	}
	if err := json.Unmarshal(out, &rows); err != nil || len(rows) != 2 || rows[0].Name != "a" || rows[0].Dir != "packages/a" ||
		strings.Join(rows[0].Tasks, " ") != "build lint" || len(rows[1].ResolvedTasks) != 2 || rows[1].ResolvedTasks[0].ID != "b#build" {
		t.Errorf("vx show = %+v (%v)", rows, err)
	}

	out = cliJSON(t, dir, "show", "b")
	validateOriginal(t, "vx show b", schema, out)
	var project struct {
		Name   string
		Config struct{ Tasks map[string]config }
	}
	if err := json.Unmarshal(out, &project); err != nil {
		t.Fatal(err)
	}
	build := project.Config.Tasks["build"]
	if project.Name != "b" || len(project.Config.Tasks) != 2 || !strings.Contains(build.Exec.Command, "echo built") ||
		strings.Join(build.DependsOn, " ") != "a#build" || build.Cache == nil || strings.Join(build.Cache.Outputs.Files, " ") != "dist/**" ||
		strings.Join(build.Cache.Inputs.Files, " ") != "src/**" {
		t.Errorf("vx show b = %+v", project)
	}

	out = cliJSON(t, dir, "show", "a#lint")
	validateOriginal(t, "vx show a#lint", schema, out)
	var one taskAnswer
	if err := json.Unmarshal(out, &one); err != nil || one.Name != "a" || one.Task != "lint" || one.Config.Exec.Command != "echo linted" ||
		one.Resolved.ID != "a#lint" || one.Config.Cache == nil || len(one.Config.Cache.Outputs.Files) != 0 {
		t.Errorf("vx show a#lint = %+v (%v)", one, err)
	}

	out = cliJSON(t, dir, "show", "build")
	validateOriginal(t, "vx show build", schema, out)
	var each []taskAnswer
	if err := json.Unmarshal(out, &each); err != nil || len(each) != 2 || each[0].Name != "a" || each[1].Task != "build" || each[1].Dir != "packages/b" {
		t.Errorf("vx show build = %+v (%v)", each, err)
	}
}
