package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tasksSDK is the TypeScript SDK whose experimental task client the task test drives, pinned
// (checked with npm view): installed once into the user's cache folder, outside the checkout.
const tasksSDK = "@modelcontextprotocol/sdk@1.32.2"

// npmPackage installs pkgs (once) under ~/.cache/vx-test/name and answers its node_modules; the
// test is skipped, saying why, where npm cannot install them.
func npmPackage(t *testing.T, name string, pkgs ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("installs " + strings.Join(pkgs, " ") + " from npm: not in -short")
	}
	base, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "vx-test", name)
	modules := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err == nil {
		return modules
	}
	for _, tool := range []string{"npm", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: %s cannot run", tool, strings.Join(pkgs, " "))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("npm", append([]string{"install", "--no-audit", "--no-fund", "--prefix", dir}, pkgs...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("npm cannot install %s here (%v)\n%s", strings.Join(pkgs, " "), err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, ".installed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return modules
}

// sdkTasksScript drives vx mcp with the TS SDK's client.experimental.tasks: runTasks of slow as a
// task (callToolStream) until its processes run, polled with getTask, listed, cancelled; then
// runTasks of test as a task, streamed to its result. It prints what it saw as one JSON line.
const sdkTasksScript = `
import fs from 'node:fs'
const [sdk, vx, dir, pidsFile] = process.argv.slice(2)
const { Client } = await import(sdk + '/dist/esm/client/index.js')
const { StdioClientTransport } = await import(sdk + '/dist/esm/client/stdio.js')
const { CallToolResultSchema } = await import(sdk + '/dist/esm/types.js')
const client = new Client({ name: 'vx-tasks-test', version: '1' }, { capabilities: { tasks: { list: {}, cancel: {} } } })
await client.connect(new StdioClientTransport({ command: vx, args: ['mcp'], cwd: dir, env: process.env, stderr: 'inherit' }))
const out = { tools: (await client.listTools()).tools.filter(t => t.execution).map(t => t.name + ':' + t.execution.taskSupport) }
const sleep = ms => new Promise(r => setTimeout(r, ms))

const slow = client.experimental.tasks.callToolStream({ name: 'runTasks', arguments: { tasks: ['slow'] } }, undefined, { task: { ttl: 60000 } })
for await (const m of slow) { if (m.type === 'taskCreated') { out.slow = m.task.taskId; break } }
for (let i = 0; i < 600; i++) {
  const pids = fs.existsSync(pidsFile) ? fs.readFileSync(pidsFile, 'utf8').trim().split(/\s+/).filter(Boolean) : []
  if (pids.length >= 2) break
  await sleep(50)
}
out.slowPolled = (await client.experimental.tasks.getTask(out.slow)).status
out.listed = (await client.experimental.tasks.listTasks()).tasks.map(t => t.taskId)
out.cancelled = (await client.experimental.tasks.cancelTask(out.slow)).status

const messages = []
for await (const m of client.experimental.tasks.callToolStream({ name: 'runTasks', arguments: { tasks: ['test'] } })) {
  messages.push(m.type)
  if (m.type === 'taskCreated') out.test = m.task.taskId
  if (m.type === 'result') out.result = m.result.structuredContent
  if (m.type === 'error') out.error = String(m.error)
}
out.messages = [...new Set(messages)]
out.fetched = (await client.experimental.tasks.getTaskResult(out.test, CallToolResultSchema)).structuredContent.summary.runId
console.log(JSON.stringify(out))
await client.close()
`

// The TS SDK 1.x's own task client runs runTasks as a task against a real vx mcp: created, polled,
// listed and cancelled (no process of the run left), and another streamed to its result, the
// runTasks answer, whose run id is the task id.
func TestMCPTasksTSSDK(t *testing.T) {
	t.Parallel()
	modules := npmPackage(t, "tasks-sdk-1.32.2", tasksSDK)
	dir := writeWorkspace(t, runToolsWorkspace(""))
	pidsDir := t.TempDir()
	pidsFile := filepath.Join(pidsDir, "pids")
	killRunLeftovers(t, pidsFile)
	script := filepath.Join(t.TempDir(), "tasks.mjs")
	if err := os.WriteFile(script, []byte(sdkTasksScript), 0o644); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", script, filepath.Join(modules, "@modelcontextprotocol", "sdk"), exe, dir, pidsFile)
	cmd.Env = append(cleanEnv(), "VX_TEST_MAIN=1", "PIDS_DIR="+pidsDir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\nstdout: %s\nstderr: %s", err, stdout, stderr.String())
	}
	var got struct {
		Tools      []string `json:"tools"`
		Slow       string   `json:"slow"`
		SlowPolled string   `json:"slowPolled"`
		Listed     []string `json:"listed"`
		Cancelled  string   `json:"cancelled"`
		Test       string   `json:"test"`
		Messages   []string `json:"messages"`
		Error      string   `json:"error"`
		Fetched    string   `json:"fetched"`
		Result     struct {
			ExitCode int `json:"exitCode"`
			Summary  struct {
				RunID string `json:"runId"`
			} `json:"summary"`
		} `json:"result"`
	}
	if err := json.Unmarshal(stdout, &got); err != nil {
		t.Fatalf("%s: %v\nstderr: %s", stdout, err, stderr.String())
	}
	if strings.Join(got.Tools, ",") != "runTasks:optional" || got.Slow == "" || got.SlowPolled != "working" ||
		len(got.Listed) != 1 || got.Listed[0] != got.Slow || got.Cancelled != "cancelled" {
		t.Errorf("the slow task: %+v", got)
	}
	pids := readRunPids(t, pidsFile, 2)
	runPid := readRunPids(t, filepath.Join(pidsDir, "runpid"), 1)[0]
	expectRunGone(t, "after cancelTask", append(pids, runPid), 10*time.Second)
	if got.Error != "" || got.Test == "" || got.Result.ExitCode != 0 || got.Result.Summary.RunID != got.Test || got.Fetched != got.Test ||
		!strings.Contains(strings.Join(got.Messages, ","), "taskCreated") || !strings.Contains(strings.Join(got.Messages, ","), "result") {
		t.Errorf("the test task: %+v", got)
	}
}

// The tasks extension's own client (ext-tasks 0.2.2) over the TS client 2.x, pinned to the
// stateless revision: installed from npm with the test.
var extTasksPackages = []string{"@modelcontextprotocol/ext-tasks@0.2.2", "@modelcontextprotocol/client@2.4.0"}

// extTasksScript drives vx mcp with @modelcontextprotocol/ext-tasks over @modelcontextprotocol/
// client pinned to 2026-07-28: runTasks of slow as a task until its processes run, then
// cancelled; runTasks of test as a task, settled to its outcome.
const extTasksScript = `
import fs from 'node:fs'
const [mods, vx, dir, pidsFile] = process.argv.slice(2)
const { Client } = await import(mods + '/@modelcontextprotocol/client/dist/index.mjs')
const { StdioClientTransport } = await import(mods + '/@modelcontextprotocol/client/dist/stdio.mjs')
const { createTaskSessionFromClient } = await import(mods + '/@modelcontextprotocol/ext-tasks/dist/client/index.js')
const info = { name: 'vx-ext-tasks-test', version: '1' }
const caps = { extensions: { 'io.modelcontextprotocol/tasks': {} } }
const client = new Client(info, { capabilities: caps, versionNegotiation: { mode: { pin: '2026-07-28' } } })
const transport = new StdioClientTransport({ command: vx, args: ['mcp'], cwd: dir, env: process.env, stderr: 'inherit' })
await client.connect(transport)
// The raw request path ext-tasks needs for the extension's wire shapes (the client itself takes
// tools/call answers of its own revision only): requests of their own ids on the client's transport,
// their responses taken before the client sees them.
const pending = new Map()
let next = 0
const forward = transport.onmessage
transport.onmessage = (msg, extra) => {
  if (typeof msg.id === 'string' && pending.has(msg.id) && !('method' in msg)) {
    const resolve = pending.get(msg.id)
    pending.delete(msg.id)
    return resolve(msg)
  }
  return forward(msg, extra)
}
const rawDispatch = async request => {
  const id = 'raw-' + (++next)
  const answered = new Promise(resolve => pending.set(id, resolve))
  await transport.send({ jsonrpc: '2.0', id, method: request.method, params: request.params })
  const msg = await answered
  return msg.error ? { kind: 'error', error: msg.error } : { kind: 'result', result: msg.result }
}
const session = createTaskSessionFromClient(client, { endpointId: 'vx', rawDispatch,
  v2RequestFraming: { protocolVersion: '2026-07-28', clientInfo: info, clientCapabilities: caps } })
const sleep = ms => new Promise(r => setTimeout(r, ms))
const out = {}

const slow = await session.callTool('runTasks', { tasks: ['slow'] })
out.slowKind = slow.kind
out.slow = slow.handle?.taskId
for (let i = 0; i < 600; i++) {
  const pids = fs.existsSync(pidsFile) ? fs.readFileSync(pidsFile, 'utf8').trim().split(/\s+/).filter(Boolean) : []
  if (pids.length >= 2) break
  await sleep(50)
}
await slow.cancel()
out.slowOutcome = (await slow.result()).status

const test = await session.callTool('runTasks', { tasks: ['test'] })
out.testKind = test.kind
out.test = test.handle?.taskId
const { outcome } = await test.settle()
out.testOutcome = outcome.status
out.testResult = outcome.result?.structuredContent
if (outcome.error) out.testError = String(outcome.error.message) + ' ' + String(outcome.error.cause ?? '')
console.log(JSON.stringify(out))
await session.close()
await client.close()
`

// ext-tasks 0.2.2 over the TS client 2.4, on the stateless revision with the tasks extension,
// runs runTasks as a task against a real vx mcp: one cancelled (no process of the run left), one
// settled to the runTasks answer, whose run id is the task id.
func TestMCPTasksExtTasksClient(t *testing.T) {
	t.Parallel()
	modules := npmPackage(t, "tasks-ext-0.2.2", extTasksPackages...)
	dir := writeWorkspace(t, runToolsWorkspace(""))
	pidsDir := t.TempDir()
	pidsFile := filepath.Join(pidsDir, "pids")
	killRunLeftovers(t, pidsFile)
	script := filepath.Join(t.TempDir(), "ext.mjs")
	if err := os.WriteFile(script, []byte(extTasksScript), 0o644); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", script, modules, exe, dir, pidsFile)
	cmd.Env = append(cleanEnv(), "VX_TEST_MAIN=1", "PIDS_DIR="+pidsDir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\nstdout: %s\nstderr: %s", err, stdout, stderr.String())
	}
	var got struct {
		SlowKind, Slow, SlowOutcome string
		TestKind, Test, TestOutcome string
		TestResult                  struct {
			ExitCode int `json:"exitCode"`
			Summary  struct {
				RunID string `json:"runId"`
			} `json:"summary"`
		}
	}
	if err := json.Unmarshal(stdout, &got); err != nil {
		t.Fatalf("%s: %v\nstderr: %s", stdout, err, stderr.String())
	}
	if got.SlowKind != "task" || got.Slow == "" || got.SlowOutcome != "cancelled" {
		t.Errorf("the slow task: %s", stdout)
	}
	pids := readRunPids(t, pidsFile, 2)
	runPid := readRunPids(t, filepath.Join(pidsDir, "runpid"), 1)[0]
	expectRunGone(t, "after cancel", append(pids, runPid), 10*time.Second)
	if got.TestKind != "task" || got.Test == "" || got.TestOutcome != "completed" || got.TestResult.ExitCode != 0 ||
		got.TestResult.Summary.RunID != got.Test {
		t.Errorf("the test task: %s", stdout)
	}
}

// confirmScript calls runTasks of deploy, outside the workspace's mcp({ run }), with the TS client
// 2.x pinned to 2026-07-28, whose elicitation handler answers the action given: the client fulfils
// the input_required answer itself and calls again with the requestState.
const confirmScript = `
const [mods, vx, dir, action] = process.argv.slice(2)
const { Client } = await import(mods + '/@modelcontextprotocol/client/dist/index.mjs')
const { StdioClientTransport } = await import(mods + '/@modelcontextprotocol/client/dist/stdio.mjs')
const client = new Client({ name: 'vx-confirm-test', version: '1' },
  { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } })
const asked = []
client.setRequestHandler('elicitation/create', async req => { asked.push(req.params.message); return { action } })
await client.connect(new StdioClientTransport({ command: vx, args: ['mcp'], cwd: dir, env: process.env, stderr: 'inherit' }))
const res = await client.callTool({ name: 'runTasks', arguments: { tasks: ['deploy'] } })
console.log(JSON.stringify({ asked, isError: !!res.isError, text: res.content[0].text }))
await client.close()
`

// The TS client 2.x asks its user through the input_required answer of a stateless call: accepted,
// the run goes on; declined, the refusal says so.
func TestMCPConfirmTSClient(t *testing.T) {
	t.Parallel()
	modules := npmPackage(t, "tasks-ext-0.2.2", extTasksPackages...)
	dir := writeWorkspace(t, runToolsWorkspace("{ run: ['test'] }"))
	script := filepath.Join(t.TempDir(), "confirm.mjs")
	if err := os.WriteFile(script, []byte(confirmScript), 0o644); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for action, want := range map[string]string{"accept": `"exitCode":0`, "decline": "the user declined"} {
		cmd := exec.Command("node", script, modules, exe, dir, action)
		cmd.Env = append(cleanEnv(), "VX_TEST_MAIN=1")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdout, err := cmd.Output()
		if err != nil {
			t.Fatalf("node (%s): %v\nstdout: %s\nstderr: %s", action, err, stdout, stderr.String())
		}
		var got struct {
			Asked   []string `json:"asked"`
			IsError bool     `json:"isError"`
			Text    string   `json:"text"`
		}
		if err := json.Unmarshal(stdout, &got); err != nil {
			t.Fatalf("%s: %v", stdout, err)
		}
		if len(got.Asked) != 1 || !strings.Contains(got.Asked[0], "Run deploy?") || !strings.Contains(got.Text, want) ||
			got.IsError != (action == "decline") {
			t.Errorf("%s: %s", action, stdout)
		}
	}
}

// The MCP Inspector's strict check of vx's tools/list warns of nothing: no schema that accepts any
// value (items {} among them), none of the shapes hosts refuse.
func TestInspectorStrictWarnsOfNothing(t *testing.T) {
	t.Parallel()
	modules := npmPackage(t, "inspector-2.12.0", "@modelcontextprotocol/inspector@2.12.0")
	dir := writeWorkspace(t, runToolsWorkspace(""))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(modules, ".bin", "mcp-inspector"), "--cli", "--strict", "-e", "VX_TEST_MAIN=1",
		"--cwd", dir, "--method", "tools/list", exe, "mcp")
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "VX_TEST_MAIN=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"runTasks"`) {
		t.Fatalf("mcp-inspector --cli --strict: %v\n%.2000s", err, out)
	}
	if i := strings.Index(string(out), "Warning"); i >= 0 {
		t.Errorf("the Inspector warns:\n%.2000s", out[i:])
	}
}
