package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vzn/vx/internal/testkit"
)

// vxCommand returns the real vx (this test binary in vx mode) with args, run in dir.
func vxCommand(t testing.TB, dir string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "VX_TEST_MAIN=1")
	return cmd
}

// cleanEnv is the test's environment without VX_ variables that would change answers, nor those
// of an agent host or GitHub Actions, which change vx run's output (run_ci.go): the tests run
// the same under Claude Code or in a GitHub job.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(kv, "VX_") && !slices.Contains(outputEnv, name) {
			env = append(env, kv)
		}
	}
	return env
}

// outputEnv are the variables of agent hosts and GitHub Actions that vx run's output follows.
var outputEnv = []string{"CLAUDECODE", "GEMINI_CLI", "CODEX_CI", "CODEX_SANDBOX", "AI_AGENT", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"}

// mcpSession starts `vx mcp` in dir and connects the official Go SDK client to it.
func mcpSession(t *testing.T, dir string, env ...string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := vxCommand(t, dir, "mcp")
	cmd.Env = append(cmd.Env, env...)
	stderr := &testkit.SyncBuffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "vx-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to vx mcp: %v\nstderr:\n%s", err, stderr)
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil && !strings.Contains(err.Error(), "signal") {
			t.Logf("close: %v", err)
		}
		if t.Failed() {
			t.Logf("vx mcp stderr:\n%s", stderr)
		}
	})
	return cs
}

// call calls a tool and returns its result: the structured content as JSON and the text.
func call(t *testing.T, cs *mcp.ClientSession, name string, args any) (structured json.RawMessage, text string, isError bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	if res.StructuredContent != nil {
		structured, err = json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
	}
	return structured, text, res.IsError
}

// cliJSON runs `vx args… --format json` in dir and returns its stdout, compacted.
func cliJSON(t *testing.T, dir string, args ...string) json.RawMessage {
	t.Helper()
	cmd := vxCommand(t, dir, append(args, "--format", "json")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("vx %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
	}
	return compact(t, out)
}

func compact(t *testing.T, data []byte) json.RawMessage {
	t.Helper()
	// Decode and encode again, so the key order and spacing of both sides are the same.
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// documentOf answers, compacted, the document a tool's answer {exitCode, <key>: document} holds
// (the original's shape of getConfig, checkLock, pruneCache, planInit and searchDocs).
func documentOf(t *testing.T, answer []byte, key string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(answer, &m); err != nil || m[key] == nil {
		t.Fatalf("no %q in the answer (%v): %.300s", key, err, answer)
	}
	return compact(t, m[key])
}

// expectRefusal calls a tool and checks that it refuses with one line containing want; it
// returns the refusal's text.
func expectRefusal(t *testing.T, cs *mcp.ClientSession, tool string, args any, want string) string {
	t.Helper()
	_, text, isErr := call(t, cs, tool, args)
	if !isErr || !strings.Contains(text, want) || strings.Contains(text, "\n") {
		data, _ := json.Marshal(args)
		t.Errorf("%s(%s) = %q (isError %v), want one line containing %q", tool, data, text, isErr, want)
	}
	return text
}

// writeWorkspace lays out files under a new temp folder.
func writeWorkspace(t *testing.T, files map[string]string) string { return testkit.TempTree(t, files) }

// sampleWorkspace is a small workspace with the mcp plugin, a secret and two projects.
var sampleWorkspace = map[string]string{
	"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
import { mcp } from '@vzn/vx-mcp'
export default defineWorkspace({
  projects: ['packages/*'],
  plugins: [mcp()],
  tasks: {
    build: { command: 'mkdir -p dist && echo built > dist/out.txt', dependsOn: ['^build'], outputs: ['dist/**'] },
    test: { command: 'echo tested', dependsOn: ['build'] },
    deploy: { command: 'echo deploying', cache: false, exec: { env: { TOKEN: { secret: 'DEPLOY_TOKEN' } } } },
  },
})
`,
	"packages/lib/package.json":  `{"name": "lib"}`,
	"packages/app/package.json":  `{"name": "app", "dependencies": {"lib": "*"}}`,
	"packages/app/vx.project.ts": "export default { tags: ['web'] }\n",
}

func TestMCPConfigTools(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, sampleWorkspace)
	cs := mcpSession(t, dir, "DEPLOY_TOKEN=tok-9f8e7d")

	// listTasks: every project and task; narrowed by project and by filter.
	got, _, isErr := call(t, cs, "listTasks", map[string]any{})
	if isErr || !strings.Contains(string(got), `"id":"app#build"`) || !strings.Contains(string(got), `"totalProjects":2`) {
		t.Errorf("listTasks = %s", got)
	}
	got, _, _ = call(t, cs, "listTasks", map[string]any{"project": "lib"})
	if strings.Contains(string(got), "app#") || !strings.Contains(string(got), "lib#build") {
		t.Errorf("listTasks(project lib) = %s", got)
	}
	got, _, _ = call(t, cs, "listTasks", map[string]any{"filter": "app..."})
	if !strings.Contains(string(got), "lib#build") || !strings.Contains(string(got), "app#build") {
		t.Errorf("listTasks(filter app...) = %s", got)
	}

	// getConfig and getWorkspaceInfo answer what the CLI answers (getConfig as {exitCode, config}).
	for _, tc := range []struct {
		tool string
		args map[string]any
		cli  []string
	}{
		{"getConfig", map[string]any{}, []string{"show"}},
		{"getConfig", map[string]any{"target": "app#deploy"}, []string{"show", "app#deploy"}},
		{"getConfig", map[string]any{"target": "build", "filter": []string{"lib"}}, []string{"show", "build", "--filter", "lib"}},
		{"getWorkspaceInfo", map[string]any{}, []string{"info"}},
	} {
		got, _, isErr := call(t, cs, tc.tool, tc.args)
		want := cliJSON(t, dir, tc.cli...)
		if tc.tool == "getConfig" {
			got = documentOf(t, got, "config")
		}
		if isErr || string(compact(t, got)) != string(want) {
			t.Errorf("%s(%v) = %s\nvx %s --format json = %s", tc.tool, tc.args, got, strings.Join(tc.cli, " "), want)
		}
	}

	// Secrets never leave: not in any answer.
	for _, tool := range []string{"listTasks", "getConfig", "getWorkspaceInfo"} {
		_, text, _ := call(t, cs, tool, map[string]any{})
		if strings.Contains(text, "tok-9f8e7d") {
			t.Errorf("%s leaks the secret: %s", tool, text)
		}
	}

	// Refusals: one line naming what was wrong.
	for _, tc := range []struct {
		tool string
		args any
		want string
	}{
		{"listTasks", map[string]any{"projetc": "lib"}, `unknown argument "projetc"`},
		{"listTasks", map[string]any{"filter": ""}, `argument "filter" must be a non-empty string`},
		{"listTasks", map[string]any{"project": "nope"}, `unknown target "nope"`},
		{"listTasks", map[string]any{"cursor": "zzz"}, `argument "cursor" is not a cursor this server gave`},
		{"getConfig", map[string]any{"tsk": "x"}, `unknown argument "tsk"`},
		{"getConfig", map[string]any{"target": "#build"}, `task id "#build" is missing a half`},
		{"getConfig", map[string]any{"target": "app#"}, `task id "app#" is missing a half`},
		{"getConfig", map[string]any{"target": 7}, `argument "target" must be a non-empty string`},
		{"getConfig", map[string]any{"filter": []string{}}, `argument "filter" must be a non-empty string or a list of them`},
		{"getWorkspaceInfo", map[string]any{"verbose": true}, `unknown argument "verbose"`},
	} {
		expectRefusal(t, cs, tc.tool, tc.args, tc.want)
	}
}

func TestMCPConfigToolsOnEmptyWorkspace(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, map[string]string{
		"vx.workspace.ts": "import { mcp } from '@vzn/vx-mcp'\nexport default { plugins: [mcp()] }\n",
	})
	cs := mcpSession(t, dir)
	got, _, isErr := call(t, cs, "listTasks", map[string]any{})
	if isErr || string(got) != `{"projects":[],"totalProjects":0}` {
		t.Errorf("listTasks = %s", got)
	}
	got, _, isErr = call(t, cs, "getConfig", map[string]any{})
	if isErr || !strings.Contains(string(got), `"config":[]`) {
		t.Errorf("getConfig = %s", got)
	}
	got, _, isErr = call(t, cs, "getWorkspaceInfo", map[string]any{})
	if isErr || !strings.Contains(string(got), `"projects":0`) {
		t.Errorf("getWorkspaceInfo = %s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, ".vx")); !os.IsNotExist(err) {
		t.Errorf("read-only tools created .vx: %v", err)
	}
}

// A config edited while the server runs is seen on the next call; a broken one fails that call
// with the config's own error and the server goes on.
func TestMCPConfigHotReload(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, map[string]string{
		"vx.workspace.ts": "import { mcp } from '@vzn/vx-mcp'\nimport { cmd } from './cmd'\nexport default { projects: ['a'], plugins: [mcp()], tasks: { build: { command: cmd } } }\n",
		"cmd.ts":          "export const cmd = 'make one'\n",
		"a/.keep":         "",
	})
	cs := mcpSession(t, dir)
	expect := func(want string) {
		t.Helper()
		_, text, _ := call(t, cs, "listTasks", map[string]any{})
		if !strings.Contains(text, want) {
			t.Errorf("listTasks = %s, want it to contain %s", text, want)
		}
	}
	expect(`"command":"make one"`)
	if err := os.WriteFile(filepath.Join(dir, "cmd.ts"), []byte("export const cmd = 'make two'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	expect(`"command":"make two"`)
	if err := os.WriteFile(filepath.Join(dir, "cmd.ts"), []byte("export const cmd = oops(\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, text, isErr := call(t, cs, "listTasks", map[string]any{})
	if !isErr || !strings.HasPrefix(text, "cmd.ts:2:1: ") {
		t.Errorf("broken config: %q (isError %v)", text, isErr)
	}
	if err := os.WriteFile(filepath.Join(dir, "cmd.ts"), []byte("export const cmd = 'make three'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	expect(`"command":"make three"`)
}

// planInit, searchDocs and checkLock answer what `vx init --dry`, `vx docs` and `vx lock --check`
// answer, and refuse what the reference says they refuse.
func TestMCPInitDocsLockTools(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"turbo.json":                `{"tasks": {"build": {"dependsOn": ["^build"], "outputs": ["dist/**"]}, "lint": {}}}`,
		"package.json":              `{"name": "root", "private": true, "workspaces": ["packages/*"]}`,
		"package-lock.json":         `{}`,
		"packages/ui/package.json":  `{"name": "ui", "scripts": {"build": "tsc", "lint": "eslint ."}}`,
		"packages/web/package.json": `{"name": "web", "scripts": {"build": "next build"}, "dependencies": {"ui": "*"}}`,
	}
	for k, v := range sampleWorkspace {
		if k == "vx.workspace.ts" {
			files[k] = v
		}
	}
	dir := writeWorkspace(t, files)
	cs := mcpSession(t, dir)

	for _, tc := range []struct {
		tool string
		args map[string]any
		cli  []string
	}{
		{"planInit", map[string]any{}, []string{"init", "--dry"}},
		{"planInit", map[string]any{"mode": "scripts"}, []string{"init", "--dry", "--mode", "scripts"}},
		{"planInit", map[string]any{"agents": []string{"claude", "codex"}}, []string{"init", "--dry", "--agents", "claude,codex"}},
		{"searchDocs", map[string]any{"query": "dependsOn", "limit": 1}, []string{"docs", "dependsOn", "--limit", "1"}},
		{"searchDocs", map[string]any{"query": "zqxjv wombat"}, []string{"docs", "zqxjv", "wombat"}},
		{"searchDocs", map[string]any{"query": "cache key", "section": "docs/cache.md#the-cache-key"}, nil},
	} {
		got, text, isErr := call(t, cs, tc.tool, tc.args)
		key := map[string]string{"planInit": "init", "searchDocs": "docs"}[tc.tool]
		if tc.cli == nil {
			// One section whole: the CLI's hit of that url.
			var whole struct{ Hits []json.RawMessage }
			_ = json.Unmarshal(cliJSON(t, dir, "docs", "cache", "key", "--limit", "100"), &whole)
			var page struct {
				Docs struct{ Hits []json.RawMessage }
			}
			if err := json.Unmarshal(got, &page); isErr || err != nil || len(page.Docs.Hits) != 1 || !strings.Contains(string(page.Docs.Hits[0]), `"url":"docs/cache.md#the-cache-key"`) {
				t.Errorf("searchDocs(%v) = %.300s", tc.args, got)
				continue
			}
			found := false
			for _, h := range whole.Hits {
				found = found || string(compact(t, h)) == string(compact(t, page.Docs.Hits[0]))
			}
			if !found {
				t.Errorf("searchDocs(%v) is not the CLI's hit, whole: %.300s", tc.args, page.Docs.Hits[0])
			}
			continue
		}
		want := cliJSON(t, dir, tc.cli...)
		if isErr || string(documentOf(t, got, key)) != string(want) {
			t.Errorf("%s(%v) = %s %s\nvx %s --format json = %s", tc.tool, tc.args, got, text, strings.Join(tc.cli, " "), want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "packages", "ui", "vx.project.ts")); !os.IsNotExist(err) {
		t.Errorf("planInit wrote files: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".mcp.json")); !os.IsNotExist(err) {
		t.Errorf("planInit wrote .mcp.json: %v", err)
	}
	got, _, _ := call(t, cs, "searchDocs", map[string]any{"query": "cache", "limit": 1e9})
	if !strings.Contains(string(got), `"limit":100`) {
		t.Errorf("searchDocs with a huge limit = %.200s, want the applied limit 100", got)
	}
	// A common word: each hit's heading and url first, its text left out, within 8,000 characters.
	if _, text, _ := call(t, cs, "searchDocs", map[string]any{"query": "cache"}); len(text) > 8000 || !strings.Contains(text, `"textOmitted":true`) ||
		!strings.Contains(text, `"url":"docs/cache.md#the-cache","text":"","page":"cache","heading":"The cache"`) {
		t.Errorf("searchDocs(cache) = %d characters: %.400s", len(text), text)
	}

	// checkLock: without a lock every task is not audited; after vx lock it is up to date; a
	// changed command is drift.
	got, _, _ = call(t, cs, "checkLock", map[string]any{})
	if !strings.Contains(string(got), `"upToDate":false`) {
		t.Errorf("checkLock without vx.lock = %s", got)
	}
	if out, err := vxCommand(t, dir, "lock").CombinedOutput(); err != nil {
		t.Fatalf("vx lock: %v\n%s", err, out)
	}
	got, _, _ = call(t, cs, "checkLock", map[string]any{})
	if want := cliJSON(t, dir, "lock", "--check"); !strings.Contains(string(got), `"upToDate":true`) || string(documentOf(t, got, "lock")) != string(want) {
		t.Errorf("checkLock after vx lock = %s\nCLI = %s", got, want)
	}
	ws := strings.Replace(files["vx.workspace.ts"], "echo tested", "echo tested twice", 1)
	if err := os.WriteFile(filepath.Join(dir, "vx.workspace.ts"), []byte(ws), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _, _ = call(t, cs, "checkLock", map[string]any{})
	if !strings.Contains(string(got), `"upToDate":false`) || !strings.Contains(string(got), `"exitCode":1`) ||
		!strings.Contains(string(got), `"field":"command"`) || !strings.Contains(string(got), "web#test") {
		t.Errorf("checkLock after a command changed = %s", got)
	}
	if want := cliJSON(t, dir, "lock", "--check"); string(documentOf(t, got, "lock")) != string(want) {
		t.Errorf("checkLock on drift = %s\nCLI = %s", got, want)
	}

	for _, tc := range []struct {
		tool string
		args any
		want string
	}{
		{"planInit", map[string]any{"mode": "maven"}, `mode`},
		{"planInit", map[string]any{"mdoe": "nx"}, `unknown argument "mdoe"`},
		{"searchDocs", map[string]any{}, `argument "query"`},
		{"searchDocs", map[string]any{"query": ""}, `argument "query" must be a non-empty string`},
		{"searchDocs", map[string]any{"query": "x", "limit": "ten"}, `argument "limit" must be a finite number`},
		{"checkLock", map[string]any{"write": true}, `unknown argument "write"`},
	} {
		expectRefusal(t, cs, tc.tool, tc.args, tc.want)
	}
}

// A config that imports @vzn/vx-mcp starts the server at once, even when it does not load; each
// call then answers the config's error; a config that loads without the plugin lists no tools.
func TestMCPStartsOnImport(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, map[string]string{
		"vx.workspace.ts": "import { mcp } from '@vzn/vx-mcp'\nexport default { projects: [ }\n",
	})
	cs := mcpSession(t, dir)
	_, text, isErr := call(t, cs, "listTasks", map[string]any{})
	if !isErr || !strings.HasPrefix(text, "vx.workspace.ts:2:") {
		t.Errorf("listTasks on a broken config = %q (isError %v)", text, isErr)
	}
	if err := os.WriteFile(filepath.Join(dir, "vx.workspace.ts"), []byte("import { mcp } from '@vzn/vx-mcp'\nexport default { plugins: [] }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Without the plugin nothing is listed, and a call names an unknown tool.
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "listTasks", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("listTasks without the plugin: err = %v", err)
	}
	listed, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(listed.Tools) != 0 {
		t.Errorf("tools/list without the plugin = %v, %v", listed, err)
	}
}

// The real vx mcp speaks every revision the official Go SDK client speaks: the handshake, the
// tool list (fields per revision) and a call.
func TestMCPEveryRevision(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, sampleWorkspace)
	for _, rev := range mcp.SupportedProtocolVersions() {
		t.Run(rev, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := vxCommand(t, dir, "mcp")
			stderr := &testkit.SyncBuffer{}
			cmd.Stderr = stderr
			client := mcp.NewClient(&mcp.Implementation{Name: "vx-test", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: rev})
			if err != nil {
				t.Fatalf("connect: %v\n%s", err, stderr)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != rev {
				t.Errorf("negotiated %s", got)
			}
			listed, err := cs.ListTools(ctx, nil)
			if err != nil || len(listed.Tools) != 15 {
				t.Fatalf("tools/list: %d tools, %v", len(listed.Tools), err)
			}
			for _, tool := range listed.Tools {
				if tool.Description == "" || tool.InputSchema == nil {
					t.Errorf("%s lacks a description or input schema", tool.Name)
				}
				if rev >= "2025-06-18" && (tool.Title == "" || tool.OutputSchema == nil) {
					t.Errorf("%s lacks a title or output schema under %s", tool.Name, rev)
				}
				if rev >= "2025-03-26" && tool.Annotations == nil {
					t.Errorf("%s lacks annotations under %s", tool.Name, rev)
				}
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "listTasks", Arguments: map[string]any{"project": "lib"}})
			if err != nil || res.IsError || len(res.Content) == 0 {
				t.Fatalf("listTasks: %v %+v", err, res)
			}
			if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "lib#build") {
				t.Errorf("listTasks text = %s", text)
			}
			if rev >= "2025-06-18" && res.StructuredContent == nil {
				t.Errorf("no structuredContent under %s", rev)
			}
		})
	}
}
