package show

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/workspace"
	"github.com/vzn/vx/internal/testkit"
)

const workspaceTS = `import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({
  projects: ['packages/*'],
  tasks: {
    build: { command: 'sh build.sh', dependsOn: ['^build'], outputs: ['dist/**'] },
    deploy: { command: 'sh deploy.sh', cache: false,
              exec: { env: { STAGE: 'prod', TOKEN: { secret: 'DEPLOY_TOKEN' } } } },
  },
})
`

func load(t *testing.T, getenv func(string) string) *graph.Workspace {
	t.Helper()
	dir := testkit.TempTree(t, map[string]string{
		"vx.workspace.ts":           workspaceTS,
		"packages/lib/package.json": `{"name":"lib"}`,
		"packages/app/package.json": `{"name":"app","dependencies":{"lib":"*"}}`,
		"packages/app/vx.project.ts": `import { defineProject } from '@vzn/vx/config'
export default defineProject({ tags: ['web'], tasks: { deploy: false } })
`,
	})
	ws, err := workspace.NewLoader(workspace.Options{Dir: dir, Getenv: getenv}).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestShowWholeWorkspace(t *testing.T) {
	ws := load(t, func(k string) string { return map[string]string{"DEPLOY_TOKEN": "s3cret-value"}[k] })
	doc, err := Show(context.Background(), ws, Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Projects) != 2 || doc.Projects[0].Name != "app" || doc.Projects[1].Name != "lib" {
		t.Fatalf("projects: %+v", doc.Projects)
	}
	app, lib := doc.Projects[0], doc.Projects[1]
	if len(app.Tasks) != 1 || app.Tasks[0].ID != "app#build" || strings.Join(app.Tasks[0].DependsOn, ",") != "lib#build" {
		t.Errorf("app's tasks (deploy opted out, build after lib's): %+v", app.Tasks)
	}
	if strings.Join(app.Tags, ",") != "web" || strings.Join(app.DependsOn, ",") != "lib" {
		t.Errorf("app: tags %v dependsOn %v", app.Tags, app.DependsOn)
	}
	var deploy *Task
	for i := range lib.Tasks {
		if lib.Tasks[i].Name == "deploy" {
			deploy = &lib.Tasks[i]
		}
	}
	if deploy == nil || deploy.Cache || deploy.ExecEnv["STAGE"] != "prod" || deploy.Secrets["TOKEN"] != "DEPLOY_TOKEN" {
		t.Fatalf("lib#deploy: %+v", deploy)
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("s3cret-value")) {
		t.Errorf("the secret's value is in the document: %s", raw)
	}
	if !strings.HasPrefix(deploy.Origins["command"], "vx.workspace.ts:") {
		t.Errorf("origin of the command: %q", deploy.Origins["command"])
	}
}

func TestShowTargets(t *testing.T) {
	ws := load(t, nil)
	for target, want := range map[string]string{
		"app":       "app#build",
		"lib#build": "lib#build",
		"deploy":    "lib#deploy",
	} {
		doc, err := Show(context.Background(), ws, Options{Target: target})
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		var ids []string
		for _, p := range doc.Projects {
			for _, task := range p.Tasks {
				ids = append(ids, task.ID)
			}
		}
		if strings.Join(ids, " ") != want {
			t.Errorf("vx show %s: %v, want %s", target, ids, want)
		}
	}
	for _, bad := range []string{"nope", "app#nope", "#build"} {
		if _, err := Show(context.Background(), ws, Options{Target: bad}); err == nil {
			t.Errorf("vx show %s answered", bad)
		}
	}
}

// Config text reaches a terminal with its control characters escaped (the JSON keeps them).
func TestWriteTextEscapes(t *testing.T) {
	doc := &Document{Projects: []Project{{Name: "app", Dir: "packages/app", Tasks: []Task{{
		ID: "app#build", Name: "build", Command: "echo \x1b[2J\x07", Description: "clip \x1b]52;c;Zm9v\x07",
		Origins: map[string]string{}}}}}}
	var b bytes.Buffer
	if err := doc.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\x1b\x07") || !strings.Contains(b.String(), `\x1b[2J`) {
		t.Fatalf("text: %q", b.String())
	}
}
