package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// argsWorkspace is a workspace of two projects, app depending on lib, whose build and test
// commands write their arguments to a file (the arguments vx appends land after the redirection),
// under mcp(OPTIONS).
func argsWorkspace(options string) map[string]string {
	return map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
import { mcp } from '@vzn/vx-mcp'
export default defineWorkspace({
  projects: ['packages/*'],
  plugins: [mcp(` + options + `)],
  tasks: {
    build: { command: 'echo build > build.txt', dependsOn: ['^build'] },
    test: { command: 'echo test > test.txt', dependsOn: ['build', '^test'] },
  },
})
`,
		".gitignore":                "*.txt\n.vx/\n",
		"packages/lib/package.json": `{ "name": "lib" }`,
		"packages/app/package.json": `{ "name": "app", "dependencies": { "lib": "*" } }`,
	}
}

// planTasks and runTasks answer a selection git narrowed to no task as vx run does: exit 0, an
// empty plan or summary saying why, nothing recorded.
func TestMCPNothingAffected(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, argsWorkspace(""))
	gitCommitAll(t, dir)
	s := startRunSession(t, dir)
	why := "nothing affected since main"
	r := mustCallRunTool(t, s.cs, "planTasks", map[string]any{"tasks": []string{"test"}, "affected": true}, "")
	var plan struct {
		ExitCode *int `json:"exitCode"`
		Plan     *struct {
			Tasks   []any  `json:"tasks"`
			NoTasks string `json:"noTasks"`
		} `json:"plan"`
		Error string `json:"error"`
	}
	if r.isError || json.Unmarshal(r.structured, &plan) != nil || plan.ExitCode == nil || *plan.ExitCode != 0 ||
		plan.Plan == nil || plan.Plan.Tasks == nil || len(plan.Plan.Tasks) != 0 || plan.Plan.NoTasks != why || plan.Error != "" {
		t.Errorf("planTasks(test, affected) = %s, want exitCode 0 and an empty plan saying %q", r.text, why)
	}
	a := decodeRunAnswer(t, mustCallRunTool(t, s.cs, "runTasks", map[string]any{"tasks": []string{"test"}, "filter": "[HEAD]"}, "tok"))
	if *a.ExitCode != 0 || a.Error != "" || a.Summary == nil || !a.Summary.OK || a.Summary.RunID != "" || a.Summary.Tasks == nil ||
		len(a.Summary.Tasks) != 0 {
		t.Errorf("runTasks(test, filter [HEAD]) = %+v, want exitCode 0 and an empty summary", a)
	}
	if _, err := os.Stat(filepath.Join(dir, ".vx")); !os.IsNotExist(err) {
		t.Errorf("a run of nothing made the state folder: %v", err)
	}
	// An unknown task is still refused.
	if a := decodeRunAnswer(t, mustCallRunTool(t, s.cs, "runTasks", map[string]any{"tasks": []string{"nosuch"}, "affected": true}, "")); *a.ExitCode != 2 ||
		!strings.Contains(a.Error, `unknown task "nosuch"`) {
		t.Errorf("runTasks(nosuch, affected) = %+v, want exit code 2", a)
	}
}

// planTasks appends args to the named tasks' commands; runTasks refuses them unless
// mcp({ args: true }), and a task name that vx run would read as a flag is refused.
func TestMCPArgsNeedTheOption(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, argsWorkspace(""))
	s := startRunSession(t, dir)
	r := mustCallRunTool(t, s.cs, "planTasks", map[string]any{"tasks": []string{"test"}, "filter": "app", "args": []string{"--ci", "a b"}}, "")
	var plan struct {
		Plan struct {
			Tasks []struct{ TaskID, Command string } `json:"tasks"`
		} `json:"plan"`
	}
	if r.isError || json.Unmarshal(r.structured, &plan) != nil {
		t.Fatalf("planTasks with args = %s", r.text)
	}
	commands := map[string]string{}
	for _, task := range plan.Plan.Tasks {
		commands[task.TaskID] = task.Command
	}
	want := map[string]string{"app#test": "echo test > test.txt --ci 'a b'", "app#build": "echo build > build.txt",
		"lib#test": "echo test > test.txt", "lib#build": "echo build > build.txt"}
	for id, cmd := range want {
		if commands[id] != cmd {
			t.Errorf("planTasks with args: %s's command %q, want %q", id, commands[id], cmd)
		}
	}
	r = mustCallRunTool(t, s.cs, "runTasks", map[string]any{"tasks": []string{"test"}, "args": []string{"--ci"}}, "")
	if !r.isError || !strings.Contains(r.text, "mcp({ args: true })") {
		t.Errorf("runTasks with args under mcp() = %q (isError %v), want a refusal naming mcp({ args: true })", r.text, r.isError)
	}
	r = mustCallRunTool(t, s.cs, "runTasks", map[string]any{"tasks": []string{"--force"}}, "")
	if !r.isError || !strings.Contains(r.text, `"tasks[0]" must not start with "-"`) {
		t.Errorf("runTasks(--force) = %q (isError %v), want a refusal", r.text, r.isError)
	}
	if _, err := os.Stat(filepath.Join(dir, "packages", "app", "test.txt")); !os.IsNotExist(err) {
		t.Errorf("a refused runTasks ran a task: %v", err)
	}
}

// Under mcp({ args: true }), runTasks hands args to the named tasks' commands, never to what
// they depend on, and a run with other args is another key.
func TestMCPRunTasksArgs(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, argsWorkspace("{ args: true }"))
	gitCommitAll(t, dir) // the files the tasks write are ignored, not inputs
	s := startRunSession(t, dir)
	a := decodeRunAnswer(t, mustCallRunTool(t, s.cs, "runTasks", map[string]any{"tasks": []string{"app#test"}, "args": []string{"--ci", "it's"}}, ""))
	if *a.ExitCode != 0 || a.Summary == nil || len(a.Summary.Tasks) != 4 {
		t.Fatalf("runTasks(app#test, args) = %+v", a)
	}
	for file, want := range map[string]string{
		"packages/app/test.txt": "test --ci it's\n", "packages/app/build.txt": "build\n",
		"packages/lib/build.txt": "build\n",
	} {
		got, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q (%v), want %q", file, got, err, want)
		}
	}
	again := decodeRunAnswer(t, mustCallRunTool(t, s.cs, "runTasks", map[string]any{"tasks": []string{"app#test"}, "args": []string{"--ci", "it's"}}, ""))
	other := decodeRunAnswer(t, mustCallRunTool(t, s.cs, "runTasks", map[string]any{"tasks": []string{"app#test"}}, ""))
	if got := statusOf(again, "app#test") + " " + statusOf(other, "app#test"); got != "hit miss" {
		t.Errorf("app#test with the same args, then without: %s, want hit miss", got)
	}
}

// statusOf is the status of taskID in a runTasks answer's summary, "" when it is not there.
func statusOf(a runToolAnswer, taskID string) string {
	if a.Summary == nil {
		return ""
	}
	for _, task := range a.Summary.Tasks {
		if task.TaskID == taskID {
			return task.Status
		}
	}
	return ""
}
