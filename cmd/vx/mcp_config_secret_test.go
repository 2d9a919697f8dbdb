package main

import (
	"strings"
	"testing"

	"github.com/vzn/vx/internal/testkit"
)

// A project config that throws a message quoting a declared secret's value reaches the agent
// with the value masked, through every tool that answers the config's error: whether the server
// started on the broken config or saw it break later.
func TestMCPConfigErrorMasksSecrets(t *testing.T) {
	t.Parallel()
	const value = "s3cr3t-value-42"
	files := map[string]string{
		"vx.workspace.ts": "import { mcp } from '@vzn/vx-mcp'\nexport default { projects: ['app'], plugins: [mcp()], tasks: {\n" +
			"  deploy: { command: 'true', cache: false, exec: { env: { TOKEN: { secret: 'DEPLOY_TOKEN' } } } },\n} }\n",
		"app/package.json": `{"name":"app"}`,
	}
	throws := map[string]string{"app/vx.project.ts": "throw new Error('deploy with " + value + " failed')\nexport default { tasks: {} }\n"}
	for _, brokenAtStart := range []bool{true, false} {
		dir := writeWorkspace(t, files)
		if brokenAtStart {
			testkit.WriteTree(t, dir, throws)
		}
		cs := mcpSession(t, dir, "DEPLOY_TOKEN="+value)
		if !brokenAtStart {
			if _, text, isErr := call(t, cs, "listTasks", map[string]any{}); isErr {
				t.Fatalf("listTasks before the break: %s", text)
			}
			testkit.WriteTree(t, dir, throws)
		}
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"listTasks", map[string]any{}},
			{"getConfig", map[string]any{}},
			{"planTasks", map[string]any{"tasks": []string{"deploy"}}},
			{"runTasks", map[string]any{"tasks": []string{"deploy"}}},
			{"getWorkspaceInfo", map[string]any{}},
		} {
			structured, text, _ := call(t, cs, c.tool, c.args)
			if strings.Contains(text, value) || strings.Contains(string(structured), value) {
				t.Errorf("broken at start %v: %s answered the secret's value: %s %s", brokenAtStart, c.tool, text, structured)
			}
			if !strings.Contains(text+string(structured), "deploy with *** failed") {
				t.Errorf("broken at start %v: %s = %s %s, want the error with the value masked", brokenAtStart, c.tool, text, structured)
			}
		}
	}
}
