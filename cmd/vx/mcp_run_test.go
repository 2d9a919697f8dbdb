//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vzn/vx/internal/testkit"
)

// runToolsWorkspace has tasks that pass, fail, print a secret, hang, and leave a detached process
// behind. Tasks that start processes write their pids to $PIDS_DIR/pids, and the pid of their
// parent's parent (the `vx run` child; the parent is the task's supervisor) to $PIDS_DIR/runpid.
func runToolsWorkspace(run string) map[string]string {
	return map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
import { mcp } from '@vzn/vx-mcp'
export default defineWorkspace({
  projects: ['packages/*'],
  plugins: [mcp(` + run + `)],
  // The tasks write where the test reads: the one variable they see undeclared.
  passThroughEnv: ['PIDS_DIR'],
  tasks: {
    build: { command: 'mkdir -p dist && echo built > dist/out.txt', dependsOn: ['^build'], outputs: ['dist/**'] },
    test: { command: 'echo tested', dependsOn: ['build'] },
    fail: { command: 'echo failing; exit 3', cache: false },
    secret: { command: 'echo "the token is $TOKEN"; echo "again $TOKEN" >&2; exit 1', cache: false,
              exec: { env: { TOKEN: { secret: 'DEPLOY_TOKEN' } } } },
    slow: { command: 'read -r _ _ _ run _ < /proc/$PPID/stat; echo $run > "$PIDS_DIR/runpid"; echo $$ >> "$PIDS_DIR/pids"; sleep 300 & echo $! >> "$PIDS_DIR/pids"; wait',
            cache: false },
    detach: { command: 'setsid sleep 300 >/dev/null 2>&1 3>&- & echo $! >> "$PIDS_DIR/pids"', cache: false },
    deploy: { command: 'echo deploying', cache: false },
  },
})
`,
		"packages/lib/package.json":  `{"name": "lib"}`,
		"packages/lib/vx.project.ts": "export default { tasks: { deploy: false, fail: false, secret: false, slow: false, detach: false } }\n",
		"packages/app/package.json":  `{"name": "app", "dependencies": {"lib": "*"}}`,
	}
}

const runSecret = "tok-5e3c1a9b"

// runSession is a `vx mcp` child with the Go SDK client connected to it over pipes the test holds,
// so that it can close the server's stdin itself (the SDK's Close first waits for calls in flight).
type runSession struct {
	cs       *mcp.ClientSession
	cmd      *exec.Cmd
	stdin    *os.File
	stderr   *testkit.SyncBuffer
	progress *runProgressLog
	once     sync.Once
	exitErr  error
}

// eof closes the server's stdin and waits for it to exit.
func (s *runSession) eof(t *testing.T) error {
	t.Helper()
	s.stdin.Close()
	s.once.Do(func() {
		exited := make(chan error, 1)
		go func() { exited <- s.cmd.Wait() }()
		select {
		case s.exitErr = <-exited:
		case <-time.After(30 * time.Second):
			_ = s.cmd.Process.Kill()
			s.exitErr = fmt.Errorf("vx mcp did not exit within 30s of EOF: %v", <-exited)
		}
	})
	return s.exitErr
}

// runProgressLog collects the progress notifications the client receives.
type runProgressLog struct {
	mu  sync.Mutex
	got []mcp.ProgressNotificationParams
}

func (p *runProgressLog) add(params *mcp.ProgressNotificationParams) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = append(p.got, *params)
}

func (p *runProgressLog) list() []mcp.ProgressNotificationParams {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]mcp.ProgressNotificationParams(nil), p.got...)
}

// startRunSession starts `vx mcp` in dir and connects a client that records progress notifications.
func startRunSession(t *testing.T, dir string, env ...string) *runSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := &runSession{stderr: &testkit.SyncBuffer{}, progress: &runProgressLog{}}
	s.cmd = vxCommand(t, dir, "mcp")
	s.cmd.Env = append(s.cmd.Env, env...)
	s.cmd.Stderr = s.stderr
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stdin, s.cmd.Stdout, s.stdin = inR, outW, inW
	err = s.cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		t.Fatalf("start vx mcp: %v", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "vx-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			s.progress.add(req.Params)
		},
	})
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		_ = s.eof(t)
		outR.Close()
		t.Fatalf("connect to vx mcp: %v\nstderr:\n%s", err, s.stderr)
	}
	s.cs = cs
	t.Cleanup(func() {
		if err := s.eof(t); err != nil {
			t.Errorf("vx mcp: %v", err)
		}
		_ = cs.Close()
		if t.Failed() {
			t.Logf("vx mcp stderr:\n%s", s.stderr)
		}
	})
	return s
}

// runToolResult is one tools/call answer as the tests read it.
type runToolResult struct {
	structured json.RawMessage
	text       string
	isError    bool
}

// callRunTool calls a tool with a progress token and the given context.
func callRunTool(ctx context.Context, cs *mcp.ClientSession, name string, args any, token string) (runToolResult, error) {
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	if token != "" {
		params.SetProgressToken(token)
	}
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		return runToolResult{}, err
	}
	var r runToolResult
	r.isError = res.IsError
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			r.text = tc.Text
		}
	}
	if res.StructuredContent != nil {
		if r.structured, err = json.Marshal(res.StructuredContent); err != nil {
			return runToolResult{}, err
		}
	}
	return r, nil
}

// runToolAnswer is runTasks' answer.
type runToolAnswer struct {
	ExitCode *int   `json:"exitCode"`
	Error    string `json:"error"`
	Summary  *struct {
		RunID     string   `json:"runId"`
		OK        bool     `json:"ok"`
		ExitCode  int      `json:"exitCode"`
		Status    string   `json:"status"`
		Requested []string `json:"requested"`
		Tasks     []struct {
			TaskID   string `json:"taskId"`
			Status   string `json:"status"`
			Hash     string `json:"hash"`
			ExitCode *int   `json:"exitCode"`
		} `json:"tasks"`
	} `json:"summary"`
}

func decodeRunAnswer(t *testing.T, r runToolResult) runToolAnswer {
	t.Helper()
	var a runToolAnswer
	if r.isError || json.Unmarshal(r.structured, &a) != nil || a.ExitCode == nil {
		t.Fatalf("runTasks answered %q (isError %v)", r.text, r.isError)
	}
	if string(compact(t, []byte(r.text))) != string(compact(t, r.structured)) {
		t.Errorf("text content %s differs from structuredContent %s", r.text, r.structured)
	}
	return a
}

// statuses maps each task of a summary to its status.
func (a runToolAnswer) statuses() map[string]string {
	m := map[string]string{}
	if a.Summary != nil {
		for _, task := range a.Summary.Tasks {
			m[task.TaskID] = task.Status
		}
	}
	return m
}

// runProcessGone reports whether pid has exited (a zombie counts as gone: it runs nothing).
func runProcessGone(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist) || errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	}
	i := bytes.LastIndexByte(data, ')')
	fields := bytes.Fields(data[i+1:])
	return len(fields) > 0 && (fields[0][0] == 'Z' || fields[0][0] == 'X')
}

// readRunPids waits until file holds at least n pids and returns them.
func readRunPids(t *testing.T, file string, n int) []int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, _ := os.ReadFile(file)
		var pids []int
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		if len(pids) >= n {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %d pids, want %d", file, len(pids), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// expectRunGone fails the test unless every pid exits within wait; survivors are killed.
func expectRunGone(t *testing.T, what string, pids []int, wait time.Duration) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		var alive []int
		for _, pid := range pids {
			if !runProcessGone(pid) {
				alive = append(alive, pid)
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range alive {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("%s: processes still alive after %s: %v (of %v)", what, wait, alive, pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// killRunLeftovers makes sure a failing test leaves no sleeper behind.
func killRunLeftovers(t *testing.T, pidsFile string) {
	t.Cleanup(func() {
		data, _ := os.ReadFile(pidsFile)
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 1 && !runProcessGone(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

// cliJSONWithEnv is cliJSON with extra environment variables.
func cliJSONWithEnv(t *testing.T, dir string, env []string, args ...string) json.RawMessage {
	t.Helper()
	cmd := vxCommand(t, dir, append(args, "--format", "json")...)
	cmd.Env = append(cmd.Env, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != 1) {
		t.Fatalf("vx %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return compact(t, out)
}

// runCallTimeout bounds each call of these tests.
const runCallTimeout = 60 * time.Second

func mustCallRunTool(t *testing.T, cs *mcp.ClientSession, name string, args any, token string) runToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runCallTimeout)
	defer cancel()
	r, err := callRunTool(ctx, cs, name, args, token)
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	return r
}

func TestMCPRunTasks(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, runToolsWorkspace(""))
	pidsDir := t.TempDir()
	killRunLeftovers(t, filepath.Join(pidsDir, "pids"))
	s := startRunSession(t, dir, "DEPLOY_TOKEN="+runSecret, "PIDS_DIR="+pidsDir)

	// A normal run, with a progress token: each finished task is a notification.
	firstRaw := mustCallRunTool(t, s.cs, "runTasks", map[string]any{"tasks": []string{"test"}}, "run-1")
	first := decodeRunAnswer(t, firstRaw)
	want := map[string]string{"lib#build": "miss", "lib#test": "miss", "app#build": "miss", "app#test": "miss"}
	if *first.ExitCode != 0 || first.Error != "" || first.Summary == nil || !first.Summary.OK ||
		fmt.Sprint(first.statuses()) != fmt.Sprint(want) {
		t.Fatalf("runTasks(test) = %+v, want exitCode 0 and %v", first, want)
	}
	if got := strings.Join(first.Summary.Requested, " "); got != "app#test lib#test" {
		t.Errorf("requested = %q", got)
	}
	// The summary is the run vx recorded.
	var last struct {
		RunID string `json:"runId"`
		Tasks []struct {
			TaskID, Status, Hash string
		} `json:"tasks"`
	}
	if err := json.Unmarshal(cliJSON(t, dir, "last"), &last); err != nil || last.RunID != first.Summary.RunID || len(last.Tasks) != 4 {
		t.Errorf("vx last = %+v (%v), want run %s", last, err, first.Summary.RunID)
	}
	// The rows of tasks that passed are lean: no hash (vx last, getRunHistory { runId } have it).
	for i, task := range last.Tasks {
		if got := first.Summary.Tasks[i]; got.TaskID != task.TaskID || got.Status != task.Status || got.Hash != "" {
			t.Errorf("task %d: runTasks says %+v, vx last says %+v", i, got, task)
		}
	}
	// ... to the byte: the summary runTasks returns is `vx last --run ID --format json`.
	var answer struct {
		Summary json.RawMessage `json:"summary"`
	}
	if err := json.Unmarshal(firstRaw.structured, &answer); err != nil {
		t.Fatal(err)
	}
	if got, want := compact(t, answer.Summary), cliJSON(t, dir, "last", "--run", first.Summary.RunID); !sameLean(got, want) {
		t.Errorf("runTasks summary = %s\nvx last --run = %s", got, want)
	}
	waitRunProgress(t, s.progress, "run-1", 4)

	// Again: every task restored from the cache; with force, every task runs.
	again := decodeRunAnswer(t, mustCallRunTool(t, s.cs, "runTasks", map[string]any{"tasks": []string{"test"}}, ""))
	if *again.ExitCode != 0 || again.statuses()["app#test"] != "hit" || again.statuses()["lib#build"] != "hit" {
		t.Errorf("second runTasks(test) = %+v, want hits", again.statuses())
	}
	forced := decodeRunAnswer(t, mustCallRunTool(t, s.cs, "runTasks", map[string]any{"tasks": []string{"app#build"}, "force": true}, ""))
	if *forced.ExitCode != 0 || fmt.Sprint(forced.statuses()) != fmt.Sprint(map[string]string{"lib#build": "forced", "app#build": "forced"}) {
		t.Errorf("runTasks(app#build, force) = %+v", forced.statuses())
	}
	filtered := decodeRunAnswer(t, mustCallRunTool(t, s.cs, "runTasks", map[string]any{"all": true, "filter": []string{"lib"}}, ""))
	if *filtered.ExitCode != 0 || len(filtered.statuses()) != 2 || filtered.statuses()["lib#test"] != "hit" {
		t.Errorf("runTasks(all, filter lib) = %+v", filtered.statuses())
	}

	// A failed task: exit code 1 and the summary says which.
	failed := decodeRunAnswer(t, mustCallRunTool(t, s.cs, "runTasks", map[string]any{"tasks": []string{"fail"}, "filter": "app"}, ""))
	if *failed.ExitCode != 1 || failed.Summary == nil || failed.Summary.OK || failed.statuses()["app#fail"] != "failed" ||
		failed.Summary.Tasks[0].ExitCode == nil || *failed.Summary.Tasks[0].ExitCode != 3 || failed.Error != "" {
		t.Errorf("runTasks(fail) = %+v", failed)
	}

	// Refusals before the run: no summary, the CLI's message, exit code 2.
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"tasks": []string{"nope"}}, `unknown task "nope": no project declares it`},
		{map[string]any{"tasks": []string{"app#nope"}}, `unknown task "app#nope"`},
		{map[string]any{"tasks": []string{"build"}, "filter": []string{"lib", "zzz"}}, `--filter "zzz" matches no project`},
		{map[string]any{"tasks": []string{"build"}, "filter": "zzz"}, `--filter "zzz" matches no project`},
		{map[string]any{"tasks": []string{"deploy"}, "filter": []string{"lib"}}, `no project selected by --filter lib has task "deploy"`},
		{map[string]any{"tasks": []string{runSecret}}, `unknown task "***": no project declares it`},
	} {
		r := mustCallRunTool(t, s.cs, "runTasks", tc.args, "")
		a := decodeRunAnswer(t, r)
		if *a.ExitCode != 2 || a.Summary != nil || a.Error != tc.want {
			t.Errorf("runTasks(%v) = %s, want exitCode 2 and error %q", tc.args, r.structured, tc.want)
		}
		if strings.Contains(r.text, runSecret) {
			t.Errorf("runTasks(%v) leaks the secret: %s", tc.args, r.text)
		}
	}

	// Argument refusals: isError, one line naming the argument.
	for _, tc := range []struct {
		args any
		want string
	}{
		{map[string]any{"tsks": []string{"build"}}, `unknown argument "tsks"`},
		{map[string]any{}, `name the tasks to run`},
		{map[string]any{"tasks": []string{}}, `name the tasks to run`},
		{map[string]any{"tasks": "build"}, `argument "tasks" must be a list`},
		{map[string]any{"tasks": []string{""}}, `argument "tasks[0]" must be a non-empty string`},
		{map[string]any{"tasks": []any{"build", 3}}, `argument "tasks[1]" must be a string`},
		{map[string]any{"tasks": []string{"#build"}}, `argument "tasks[0]" must be a task id project#task, not "#build"`},
		{map[string]any{"tasks": []string{"build", "app#"}}, `argument "tasks[1]" must be a task id project#task, not "app#"`},
		{map[string]any{"tasks": []string{"build"}, "filter": ""}, `argument "filter" must be a non-empty string or a list of them`},
		{map[string]any{"tasks": []string{"build"}, "filter": []string{}}, `argument "filter" must be a non-empty string or a list of them`},
		{map[string]any{"tasks": []string{"build"}, "filter": []any{"lib", ""}}, `argument "filter" must be a non-empty string or a list of them`},
		{map[string]any{"tasks": []string{"build"}, "filter": 7}, `argument "filter" must be a non-empty string or a list of them`},
		{map[string]any{"tasks": []string{"build"}, "affected": 1}, `argument "affected" must be true, false or a git ref`},
		{map[string]any{"tasks": []string{"build"}, "force": "yes"}, `argument "force" must be true or false`},
		{map[string]any{"all": "true"}, `argument "all" must be true or false`},
	} {
		r := mustCallRunTool(t, s.cs, "runTasks", tc.args, "")
		if !r.isError || !strings.Contains(r.text, tc.want) || strings.Contains(r.text, "\n") {
			t.Errorf("runTasks(%v) = %q (isError %v), want one line containing %q", tc.args, r.text, r.isError, tc.want)
		}
	}
	// Arguments that are not an object are the server's -32602.
	ctx, cancel := context.WithTimeout(context.Background(), runCallTimeout)
	defer cancel()
	if _, err := callRunTool(ctx, s.cs, "runTasks", []string{"build"}, ""); err == nil || !strings.Contains(err.Error(), "object") {
		t.Errorf("runTasks with array arguments: %v, want -32602 arguments must be an object", err)
	}

	// A task that prints its secret and fails: the secret is in no answer and no progress message.
	sec := mustCallRunTool(t, s.cs, "runTasks", map[string]any{"tasks": []string{"app#secret"}}, "run-secret")
	if a := decodeRunAnswer(t, sec); *a.ExitCode != 1 || a.statuses()["app#secret"] != "failed" {
		t.Errorf("runTasks(app#secret) = %s", sec.structured)
	}
	waitRunProgress(t, s.progress, "run-secret", 1)
	if strings.Contains(sec.text, runSecret) {
		t.Errorf("runTasks leaks the secret: %s", sec.text)
	}
	for _, p := range s.progress.list() {
		if strings.Contains(p.Message, runSecret) {
			t.Errorf("a progress message leaks the secret: %q", p.Message)
		}
	}
	// Its failure log holds the secret masked: the task did print it.
	if out, err := vxCommand(t, dir, "last", "--log", "app#secret").Output(); err != nil || !strings.Contains(string(out), "the token is ***") ||
		strings.Contains(string(out), runSecret) {
		t.Errorf("vx last --log app#secret = %q (%v), want the masked secret", out, err)
	}

	// A task that detaches a process: when the call ends, nothing it started is left.
	det := decodeRunAnswer(t, mustCallRunTool(t, s.cs, "runTasks", map[string]any{"tasks": []string{"detach"}}, ""))
	if *det.ExitCode != 0 {
		t.Errorf("runTasks(detach) = %+v", det)
	}
	expectRunGone(t, "detached process", readRunPids(t, filepath.Join(pidsDir, "pids"), 1), 2*time.Second)
}

// waitRunProgress waits for n task notifications of token, checking that progress grows, total is
// the task count, and each message names a task and its status.
func waitRunProgress(t *testing.T, log *runProgressLog, token string, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var mine []mcp.ProgressNotificationParams
		for _, p := range log.list() {
			if p.ProgressToken == token {
				mine = append(mine, p)
			}
		}
		if len(mine) >= n+1 { // the start, then one per task
			last := 0.0
			for i, p := range mine {
				if i > 0 && p.Progress <= last {
					t.Errorf("progress %v after %v", p.Progress, last)
				}
				last = p.Progress
				if p.Total != float64(n) {
					t.Errorf("progress %q: total %v, want %d", p.Message, p.Total, n)
				}
				if i > 0 && (!strings.Contains(p.Message, "#") || !strings.Contains(p.Message, fmt.Sprintf("%d/%d", i, n))) {
					t.Errorf("progress message %q does not name the task and its place", p.Message)
				}
			}
			if last != float64(n) {
				t.Errorf("last progress %v, want %d", last, n)
			}
			if m := mine[1].Message; !strings.Contains(m, "ran (miss)") && !strings.Contains(m, "hit") && !strings.Contains(m, "failed (exit code") {
				t.Errorf("progress message %q does not say the task's status", mine[1].Message)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("progress notifications for %s: %+v, want %d", token, mine, n+1)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// mcp({ run }) limits runTasks: a list allows only its task names; false hides the tool.
func TestMCPRunTasksPolicy(t *testing.T) {
	t.Parallel()
	files := runToolsWorkspace("{ run: ['build', 'test'] }")
	dir := writeWorkspace(t, files)
	s := startRunSession(t, dir)

	// Allowed names run, and what they depend on runs too.
	a := decodeRunAnswer(t, mustCallRunTool(t, s.cs, "runTasks", map[string]any{"tasks": []string{"app#test"}}, ""))
	if *a.ExitCode != 0 || len(a.statuses()) != 3 || a.statuses()["app#build"] == "" {
		t.Errorf("runTasks(app#test) under run: [build, test] = %+v", a.statuses())
	}
	// all: true where every selected task is allowed (lib has only build and test).
	a = decodeRunAnswer(t, mustCallRunTool(t, s.cs, "runTasks", map[string]any{"all": true, "filter": "lib"}, ""))
	if *a.ExitCode != 0 || len(a.statuses()) != 2 {
		t.Errorf("runTasks(all, filter lib) under run: [build, test] = %+v", a.statuses())
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"tasks": []string{"deploy"}}, `task "deploy" is not one this workspace's mcp({ run }) lets an agent run (allowed: build, test)`},
		{map[string]any{"tasks": []string{"build", "app#deploy"}}, `task "app#deploy" is not one`},
		{map[string]any{"tasks": []string{"nope"}}, `task "nope" is not one`},
		{map[string]any{"all": true}, `all: true selects tasks named deploy, detach, fail, secret, slow, which this workspace's mcp({ run }) does not let an agent run`},
		{map[string]any{"all": true, "filter": "app"}, `all: true selects tasks named deploy`},
	} {
		r := mustCallRunTool(t, s.cs, "runTasks", tc.args, "")
		if !r.isError || !strings.Contains(r.text, tc.want) || strings.Contains(r.text, "\n") {
			t.Errorf("runTasks(%v) = %q (isError %v), want one line containing %q", tc.args, r.text, r.isError, tc.want)
		}
	}
	// Nothing ran for the refusals: the last run is still the lib one.
	var last struct {
		Requested []string `json:"requested"`
	}
	if err := json.Unmarshal(cliJSON(t, dir, "last"), &last); err != nil || strings.Join(last.Requested, " ") != "lib#build lib#test" {
		t.Errorf("the last run requested %v (%v), want the lib run", last.Requested, err)
	}

	// run: false: runTasks is not listed and cannot be called; planTasks still answers.
	ws := strings.Replace(files["vx.workspace.ts"], "mcp({ run: ['build', 'test'] })", "mcp({ run: false })", 1)
	if err := os.WriteFile(filepath.Join(dir, "vx.workspace.ts"), []byte(ws), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runCallTimeout)
	defer cancel()
	list, err := s.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool.Name == "runTasks" {
			t.Errorf("runTasks is listed under mcp({ run: false })")
		}
	}
	if _, err := callRunTool(ctx, s.cs, "runTasks", map[string]any{"tasks": []string{"build"}}, ""); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("runTasks under mcp({ run: false }): %v, want unknown tool", err)
	}
	if r := mustCallRunTool(t, s.cs, "planTasks", map[string]any{"tasks": []string{"build"}}, ""); r.isError || !strings.Contains(string(r.structured), `"plan"`) {
		t.Errorf("planTasks under mcp({ run: false }) = %s", r.text)
	}

	// Listed with its annotations once the workspace lets it run again.
	if err := os.WriteFile(filepath.Join(dir, "vx.workspace.ts"), []byte(files["vx.workspace.ts"]), 0o644); err != nil {
		t.Fatal(err)
	}
	list, err = s.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]*mcp.Tool{}
	for _, tool := range list.Tools {
		found[tool.Name] = tool
	}
	for name, want := range map[string]string{
		"runTasks":   `{"destructiveHint":false,"idempotentHint":false,"openWorldHint":false,"readOnlyHint":false}`,
		"planTasks":  `{"destructiveHint":false,"idempotentHint":true,"openWorldHint":false,"readOnlyHint":true}`,
		"pruneCache": `{"destructiveHint":true,"idempotentHint":true,"openWorldHint":false,"readOnlyHint":false}`,
	} {
		tool := found[name]
		if tool == nil {
			t.Errorf("%s is not listed", name)
			continue
		}
		ann, _ := json.Marshal(tool.Annotations)
		if string(compact(t, ann)) != want {
			t.Errorf("%s annotations %s, want %s", name, ann, want)
		}
		if tool.OutputSchema == nil || tool.Description == "" || tool.Title == "" {
			t.Errorf("%s lacks an output schema, description or title", name)
		}
		in, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(in, &schema); err != nil || len(schema.Properties) == 0 {
			t.Errorf("%s input schema %s", name, in)
		}
		for prop, p := range schema.Properties {
			if p.Description == "" {
				t.Errorf("%s: argument %s has no description", name, prop)
			}
		}
	}
}

// Cancelling a call (notifications/cancelled) stops the run and every process it started.
// startSlowRunSession starts vx mcp on the run tools' workspace, whose slow tasks write their pids
// to pidsFile in pidsDir (killed at cleanup whatever the test found).
func startSlowRunSession(t *testing.T) (s *runSession, pidsDir, pidsFile string) {
	t.Helper()
	dir := writeWorkspace(t, runToolsWorkspace(""))
	pidsDir = t.TempDir()
	pidsFile = filepath.Join(pidsDir, "pids")
	killRunLeftovers(t, pidsFile)
	return startRunSession(t, dir, "PIDS_DIR="+pidsDir), pidsDir, pidsFile
}

func TestMCPRunTasksCancel(t *testing.T) {
	t.Parallel()
	s, pidsDir, pidsFile := startSlowRunSession(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := callRunTool(ctx, s.cs, "runTasks", map[string]any{"tasks": []string{"slow"}}, "slow")
		done <- err
	}()
	pids := readRunPids(t, pidsFile, 2) // the task's shell and its sleep
	runPid := readRunPids(t, filepath.Join(pidsDir, "runpid"), 1)[0]
	for _, pid := range append(pids, runPid) {
		if runProcessGone(pid) {
			t.Fatalf("process %d is not running before the cancel", pid)
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
	expectRunGone(t, "after cancel", append(pids, runPid), 10*time.Second)

	// The run was stopped, not killed: vx recorded it as cancelled. The server goes on.
	if last := string(cliJSON(t, s.cmd.Dir, "last")); !strings.Contains(last, `"status":"cancelled"`) {
		t.Errorf("vx last after the cancel = %s", last)
	}
	if r := mustCallRunTool(t, s.cs, "listTasks", map[string]any{}, ""); r.isError {
		t.Errorf("listTasks after the cancel: %s", r.text)
	}
}

// EOF on the server's stdin (the client went away) stops every run in flight and every process
// it started before the server exits.
func TestMCPRunTasksEOF(t *testing.T) {
	t.Parallel()
	s, pidsDir, pidsFile := startSlowRunSession(t)

	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), runCallTimeout)
		defer cancel()
		_, err := callRunTool(ctx, s.cs, "runTasks", map[string]any{"tasks": []string{"slow"}}, "")
		done <- err
	}()
	pids := readRunPids(t, pidsFile, 2)
	runPid := readRunPids(t, filepath.Join(pidsDir, "runpid"), 1)[0]
	start := time.Now()
	if err := s.eof(t); err != nil {
		t.Errorf("vx mcp after EOF: %v, want exit 0", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the server took %s to exit after EOF", took)
	}
	if err := <-done; err == nil {
		t.Errorf("the call in flight answered after EOF")
	}
	// The server has exited: by then nothing of the run may be left.
	expectRunGone(t, "after EOF", append(pids, runPid), 100*time.Millisecond)
}

// The `vx run` child killed with SIGKILL cannot stop its tasks: the server does.
func TestMCPRunTasksChildKilled(t *testing.T) {
	t.Parallel()
	s, pidsDir, pidsFile := startSlowRunSession(t)

	done := make(chan runToolResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), runCallTimeout)
		defer cancel()
		r, err := callRunTool(ctx, s.cs, "runTasks", map[string]any{"tasks": []string{"slow"}}, "")
		if err != nil {
			r = runToolResult{text: err.Error()}
		}
		done <- r
	}()
	pids := readRunPids(t, pidsFile, 2)
	runPid := readRunPids(t, filepath.Join(pidsDir, "runpid"), 1)[0]
	if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", runPid)); !bytes.Contains(comm, []byte("run\x00")) {
		t.Fatalf("process %d is not the vx run child: %q", runPid, comm)
	}
	if err := syscall.Kill(runPid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if !r.isError || !strings.Contains(r.text, "vx run ended by a signal (killed)") || strings.Contains(r.text, "\n") {
		t.Errorf("runTasks whose child was killed = %q (isError %v)", r.text, r.isError)
	}
	// The call has answered: by then every task process is gone.
	expectRunGone(t, "after the vx run child was killed", append(pids, runPid), 100*time.Millisecond)
	if r := mustCallRunTool(t, s.cs, "listTasks", map[string]any{}, ""); r.isError {
		t.Errorf("listTasks afterwards: %s", r.text)
	}
}

// planTasks answers what `vx run … --dry=json` answers, runs nothing and creates nothing.
func TestMCPPlanTasks(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, runToolsWorkspace(""))
	s := startRunSession(t, dir, "DEPLOY_TOKEN="+runSecret)

	cases := []struct {
		args map[string]any
		cli  []string
	}{
		{map[string]any{"tasks": []string{"test"}}, []string{"run", "test", "--dry=json"}},
		{map[string]any{"all": true}, []string{"run", "--all", "--dry=json"}},
		{map[string]any{"tasks": []string{"app#build", "deploy"}}, []string{"run", "app#build", "deploy", "--dry=json"}},
		{map[string]any{"tasks": []string{"build"}, "filter": "lib"}, []string{"run", "build", "--filter", "lib", "--dry=json"}},
		{map[string]any{"all": true, "filter": []string{"lib", "app"}}, []string{"run", "--all", "--filter", "lib", "--filter", "app", "--dry=json"}},
		{map[string]any{"tasks": []string{"test"}, "affected": false}, []string{"run", "test", "--dry=json"}},
	}
	compare := func() {
		t.Helper()
		for _, tc := range cases {
			r := mustCallRunTool(t, s.cs, "planTasks", tc.args, "")
			var ans struct {
				ExitCode int             `json:"exitCode"`
				Plan     json.RawMessage `json:"plan"`
			}
			if r.isError || json.Unmarshal(r.structured, &ans) != nil || ans.ExitCode != 0 || ans.Plan == nil {
				t.Errorf("planTasks(%v) = %s", tc.args, r.text)
				continue
			}
			if want := cliJSONWithEnv(t, dir, []string{"DEPLOY_TOKEN=" + runSecret}, tc.cli...); !sameLean(compact(t, ans.Plan), want) {
				t.Errorf("planTasks(%v).plan = %s\nvx %s = %s", tc.args, ans.Plan, strings.Join(tc.cli, " "), want)
			}
		}
	}
	// No state folder yet: every task a miss, and planning creates none.
	compare()
	if _, err := os.Stat(filepath.Join(dir, ".vx")); !os.IsNotExist(err) {
		t.Fatalf("planTasks created .vx: %v", err)
	}
	// After a run: hits and p50s.
	if out, err := vxCommand(t, dir, "run", "test").CombinedOutput(); err != nil {
		t.Fatalf("vx run test: %v\n%s", err, out)
	}
	compare()
	if got := string(mustCallRunTool(t, s.cs, "planTasks", map[string]any{"tasks": []string{"test"}}, "").structured); !strings.Contains(got, `"cache":"hit"`) || strings.Contains(got, `"p50Ms":null`) {
		t.Errorf("planTasks after a run = %s, want hits and p50s", got)
	}

	// Refusals of the selection: exitCode 2 and vx run's own message.
	for _, tc := range []struct {
		args map[string]any
		cli  []string
	}{
		{map[string]any{"tasks": []string{"nope"}}, []string{"run", "nope", "--dry=json"}},
		{map[string]any{"tasks": []string{"build"}, "filter": "zzz"}, []string{"run", "build", "--filter", "zzz", "--dry=json"}},
		{map[string]any{"tasks": []string{"deploy"}, "filter": "lib"}, []string{"run", "deploy", "--filter", "lib", "--dry=json"}},
		{map[string]any{"tasks": []string{runSecret}}, []string{"run", runSecret, "--dry=json"}},
	} {
		r := mustCallRunTool(t, s.cs, "planTasks", tc.args, "")
		var ans struct {
			ExitCode int              `json:"exitCode"`
			Plan     *json.RawMessage `json:"plan"`
			Error    string           `json:"error"`
		}
		if r.isError || json.Unmarshal(r.structured, &ans) != nil {
			t.Errorf("planTasks(%v) = %q", tc.args, r.text)
			continue
		}
		cmd := vxCommand(t, dir, tc.cli...)
		cmd.Env = append(cmd.Env, "DEPLOY_TOKEN="+runSecret)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("vx %s: %v", strings.Join(tc.cli, " "), err)
		}
		want := strings.TrimPrefix(strings.TrimSpace(stderr.String()), "vx: ")
		if ans.ExitCode != ee.ExitCode() || ans.Plan != nil || ans.Error != want || strings.Contains(r.text, runSecret) {
			t.Errorf("planTasks(%v) = %s, want exitCode %d and error %q", tc.args, r.structured, ee.ExitCode(), want)
		}
	}
	// Argument refusals.
	for _, tc := range []struct {
		args any
		want string
	}{
		{map[string]any{"tasks": []string{"build"}, "force": true}, `unknown argument "force"`},
		{map[string]any{"task": []string{"build"}}, `unknown argument "task"`},
		{map[string]any{}, `name the tasks to plan`},
		{map[string]any{"tasks": []string{"#build"}}, `argument "tasks[0]" must be a task id project#task, not "#build"`},
		{map[string]any{"tasks": []string{"app#"}}, `argument "tasks[0]" must be a task id project#task, not "app#"`},
		{map[string]any{"tasks": []string{" "}}, `argument "tasks[0]" must be a non-empty string`},
		{map[string]any{"all": true, "filter": ""}, `argument "filter" must be a non-empty string or a list of them`},
		{map[string]any{"all": true, "filter": []any{3}}, `argument "filter" must be a non-empty string or a list of them`},
		{map[string]any{"all": true, "affected": ""}, `argument "affected" must be true, false or a git ref`},
	} {
		r := mustCallRunTool(t, s.cs, "planTasks", tc.args, "")
		if !r.isError || !strings.Contains(r.text, tc.want) || strings.Contains(r.text, "\n") {
			t.Errorf("planTasks(%v) = %q (isError %v), want one line containing %q", tc.args, r.text, r.isError, tc.want)
		}
	}
	// Nothing ran: the last run is still the CLI's.
	if last := string(cliJSON(t, dir, "last")); !strings.Contains(last, `"requested":["app#test","lib#test"]`) {
		t.Errorf("vx last = %s", last)
	}
}

// planTasks under --affected answers the affected reasons, as vx run --affected --dry=json does.
func TestMCPPlanTasksAffected(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	files := runToolsWorkspace("")
	files[".gitignore"] = ".vx/\n"
	dir := writeWorkspace(t, files)
	for _, argv := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "initial"}} {
		cmd := exec.Command("git", argv...)
		cmd.Dir = dir
		cmd.Env = append(cleanEnv(), "GIT_AUTHOR_NAME=vx", "GIT_AUTHOR_EMAIL=vx@example.com", "GIT_COMMITTER_NAME=vx",
			"GIT_COMMITTER_EMAIL=vx@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", argv, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "packages", "lib", "index.js"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startRunSession(t, dir)
	for _, tc := range []struct {
		args map[string]any
		cli  []string
	}{
		{map[string]any{"tasks": []string{"build"}, "affected": true}, []string{"run", "build", "--affected", "--dry=json"}},
		{map[string]any{"all": true, "affected": "HEAD"}, []string{"run", "--all", "--affected=HEAD", "--dry=json"}},
	} {
		r := mustCallRunTool(t, s.cs, "planTasks", tc.args, "")
		var ans struct {
			Plan json.RawMessage `json:"plan"`
		}
		if r.isError || json.Unmarshal(r.structured, &ans) != nil || ans.Plan == nil {
			t.Errorf("planTasks(%v) = %s", tc.args, r.text)
			continue
		}
		want := cliJSON(t, dir, tc.cli...)
		if string(compact(t, ans.Plan)) != string(want) || !strings.Contains(string(want), `"affected":"`) {
			t.Errorf("planTasks(%v).plan = %s\nvx %s = %s", tc.args, ans.Plan, strings.Join(tc.cli, " "), want)
		}
	}
}

// pruneCache answers what `vx cache prune --format json` answers: a dry run unless dryRun is
// false, and from an empty cache, creating nothing, where there is no state folder.
func TestMCPPruneCache(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, runToolsWorkspace(""))
	s := startRunSession(t, dir)

	const empty = `{"exitCode":0,"prune":{"dryRun":%v,"evicted":0,"bytesFreed":0,"orphans":0,"orphanBytes":0,"staleFileStats":0,"held":0,"evictedEntries":[]}}`
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, fmt.Sprintf(empty, true)},
		{map[string]any{"maxSize": "1", "olderThan": "1d"}, fmt.Sprintf(empty, true)},
		{map[string]any{"dryRun": false}, fmt.Sprintf(empty, false)},
		{map[string]any{"maxSize": "1", "dryRun": false}, fmt.Sprintf(empty, false)},
	} {
		if r := mustCallRunTool(t, s.cs, "pruneCache", tc.args, ""); r.isError || r.text != tc.want {
			t.Errorf("pruneCache(%v) with no cache = %s, want %s", tc.args, r.text, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".vx")); !os.IsNotExist(err) {
		t.Fatalf("pruneCache created .vx: %v", err)
	}

	if out, err := vxCommand(t, dir, "run", "build").CombinedOutput(); err != nil {
		t.Fatalf("vx run build: %v\n%s", err, out)
	}
	// The dry run answers what the CLI's dry run answers, and removes nothing.
	for _, tc := range []struct {
		args map[string]any
		cli  []string
	}{
		{map[string]any{}, []string{"cache", "prune", "--dry-run"}},
		{map[string]any{"maxSize": "1"}, []string{"cache", "prune", "--max-size", "1", "--dry-run"}},
		{map[string]any{"olderThan": "1h", "dryRun": true}, []string{"cache", "prune", "--older-than", "1h", "--dry-run"}},
	} {
		r := mustCallRunTool(t, s.cs, "pruneCache", tc.args, "")
		if want := cliJSON(t, dir, tc.cli...); r.isError || string(documentOf(t, r.structured, "prune")) != string(want) {
			t.Errorf("pruneCache(%v) = %s\nvx %s = %s", tc.args, r.text, strings.Join(tc.cli, " "), want)
		}
	}
	if got := string(mustCallRunTool(t, s.cs, "pruneCache", map[string]any{"maxSize": "1"}, "").structured); !strings.Contains(got, `"taskId":"app#build"`) || !strings.Contains(got, `"taskId":"lib#build"`) {
		t.Errorf("pruneCache(maxSize 1) = %s, want both entries", got)
	}
	stats := cliJSON(t, dir, "cache", "stats")
	if !strings.Contains(string(stats), `"entries":2`) {
		t.Fatalf("the dry run removed entries: %s", stats)
	}
	// dryRun false removes them; history stays.
	r := mustCallRunTool(t, s.cs, "pruneCache", map[string]any{"maxSize": "1", "dryRun": false}, "")
	if r.isError || !strings.Contains(string(r.structured), `"dryRun":false`) || !strings.Contains(string(r.structured), `"taskId":"app#build"`) {
		t.Errorf("pruneCache(maxSize 1, dryRun false) = %s", r.text)
	}
	if stats := cliJSON(t, dir, "cache", "stats"); !strings.Contains(string(stats), `"entries":0`) {
		t.Errorf("after pruneCache: %s", stats)
	}
	if last := cliJSON(t, dir, "last"); !strings.Contains(string(last), `"runId"`) {
		t.Errorf("history was pruned: %s", last)
	}

	for _, tc := range []struct {
		args any
		want string
	}{
		{map[string]any{"olderThan": "soon"}, `argument "olderThan": age "soon": want a duration such as 12h, 7d or 2w`},
		{map[string]any{"maxSize": "lots"}, `argument "maxSize": size "lots": want a size such as 500MB or 2G`},
		{map[string]any{"maxSize": ""}, `argument "maxSize" must be a non-empty string`},
		{map[string]any{"maxSize": 100}, `argument "maxSize" must be a non-empty string`},
		{map[string]any{"dryRun": "false"}, `argument "dryRun" must be true or false`},
		{map[string]any{"dryRun": nil}, `argument "dryRun" must be true or false`},
		{map[string]any{"dry": false}, `unknown argument "dry"`},
	} {
		r := mustCallRunTool(t, s.cs, "pruneCache", tc.args, "")
		if !r.isError || !strings.Contains(r.text, tc.want) || strings.Contains(r.text, "\n") {
			t.Errorf("pruneCache(%v) = %q (isError %v), want one line containing %q", tc.args, r.text, r.isError, tc.want)
		}
	}
}

// planTasks and pruneCache in a workspace with no projects and no state folder.
func TestMCPPlanPruneEmptyWorkspace(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, map[string]string{
		"vx.workspace.ts": "import { mcp } from '@vzn/vx-mcp'\nexport default { plugins: [mcp()] }\n",
	})
	s := startRunSession(t, dir)
	r := mustCallRunTool(t, s.cs, "planTasks", map[string]any{"all": true}, "")
	if r.isError || r.text != `{"exitCode":2,"error":"no task matches --all"}` {
		t.Errorf("planTasks(all) in an empty workspace = %s", r.text)
	}
	r = mustCallRunTool(t, s.cs, "pruneCache", map[string]any{"dryRun": false}, "")
	if r.isError || !strings.Contains(string(r.structured), `"evicted":0`) {
		t.Errorf("pruneCache in an empty workspace = %s", r.text)
	}
	r = mustCallRunTool(t, s.cs, "runTasks", map[string]any{"all": true}, "")
	if a := decodeRunAnswer(t, r); *a.ExitCode != 2 || a.Error != "no task matches --all" {
		t.Errorf("runTasks(all) in an empty workspace = %s", r.text)
	}
	if _, err := os.Stat(filepath.Join(dir, ".vx")); !os.IsNotExist(err) {
		t.Errorf("planTasks or pruneCache created .vx: %v", err)
	}
}

// runTasks refuses a persistent task asked for by name: an agent cannot wait on a server.
func TestMCPRunTasksRefusesPersistent(t *testing.T) {
	t.Parallel()
	files := runToolsWorkspace("")
	files["packages/app/vx.project.ts"] = "export default { tasks: { serve: { command: 'sleep 300', persistent: true } } }\n"
	dir := writeWorkspace(t, files)
	s := startRunSession(t, dir)
	for _, args := range []map[string]any{{"tasks": []string{"serve"}}, {"tasks": []string{"build", "app#serve"}}} {
		r := mustCallRunTool(t, s.cs, "runTasks", args, "")
		if !r.isError || !strings.Contains(r.text, "app#serve is persistent") || strings.Contains(r.text, "\n") {
			t.Errorf("runTasks(%v) = %q (isError %v), want a one-line refusal naming app#serve", args, r.text, r.isError)
		}
	}
}

// The server keeps a `vx run` child started ahead of the next runTasks call, which has loaded
// the config by then: an edit of the config (or a project added) after it started is the next
// run's all the same, and the kept child is gone with the server.
func TestMCPRunTasksKeptChildSeesEdits(t *testing.T) {
	t.Parallel()
	config := func(word string) string {
		return `import { defineWorkspace } from '@vzn/vx/config'
import { mcp } from '@vzn/vx-mcp'
export default defineWorkspace({
  projects: ['packages/*'],
  plugins: [mcp()],
  tasks: { say: { command: 'echo ` + word + ` > said.txt', cache: false } },
})
`
	}
	dir := writeWorkspace(t, map[string]string{
		"vx.workspace.ts":         config("first"),
		"packages/a/package.json": `{"name": "a"}`,
	})
	s := startRunSession(t, dir)
	said := func(project string) string {
		data, _ := os.ReadFile(filepath.Join(dir, "packages", project, "said.txt"))
		return strings.TrimSpace(string(data))
	}
	run := func(word string, projects ...string) {
		t.Helper()
		r := decodeRunAnswer(t, mustCallRunTool(t, s.cs, "runTasks", map[string]any{"tasks": []string{"say"}}, ""))
		if r.Summary == nil || !r.Summary.OK || len(r.Summary.Tasks) != len(projects) {
			t.Fatalf("runTasks(say) = %+v", r)
		}
		for _, p := range projects {
			if got := said(p); got != word {
				t.Fatalf("%s said %q, want %q", p, got, word)
			}
		}
	}
	run("first", "a")
	kept := waitKeptChild(t, s.cmd.Process.Pid)
	testkit.WriteTree(t, dir, map[string]string{"vx.workspace.ts": config("second")})
	run("second", "a")
	kept = append(kept, waitKeptChild(t, s.cmd.Process.Pid)...)
	testkit.WriteTree(t, dir, map[string]string{"packages/b/package.json": `{"name": "b"}`})
	run("second", "a", "b")
	kept = append(kept, waitKeptChild(t, s.cmd.Process.Pid)...)
	if err := s.eof(t); err != nil {
		t.Fatal(err)
	}
	expectRunGone(t, "after the server's EOF", kept, time.Second)
}

// waitKeptChild waits for the `vx run` child the server started ahead of the next call to have
// loaded the config and to wait for its order, and answers its pid. Waiting is all it does then:
// its CPU time stays the same for 200 ms (an edit made before it loaded would not test it).
func waitKeptChild(t *testing.T, server int) []int {
	t.Helper()
	pid := findKeptChild(t, server)
	cpu := func() string {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatalf("the kept child %d: %v", pid, err)
		}
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		return fields[11] + " " + fields[12] // utime, stime
	}
	for last, still := cpu(), 0; still < 10; still++ {
		time.Sleep(20 * time.Millisecond)
		if now := cpu(); now != last {
			last, still = now, 0
		}
	}
	return []int{pid}
}

// findKeptChild waits for the `vx run` child the server starts ahead of the next call, and
// answers its pid.
func findKeptChild(t *testing.T, server int) int {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			if err != nil {
				continue
			}
			fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if len(fields) > 1 && fields[1] == strconv.Itoa(server) && bytes.Contains(cmdline, []byte("\x00__await-run\x00")) {
				return pid
			}
		}
	}
	t.Fatal("the server kept no vx run child for the next call")
	return 0
}

// Between runTasks calls the agent (or anything) may change what a hit would restore: each call's
// hits put the outputs back as their entries list them — a file removed, one changed in place,
// one under a folder of the outputs changed, a stray beside them — for the server vouches for a
// hit's outputs (handoff.Handoff's Intact) only as its watcher sees them now.
func TestMCPRunTasksRepairsOutputs(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
import { mcp } from '@vzn/vx-mcp'
export default defineWorkspace({
  projects: ['packages/*'],
  plugins: [mcp()],
  tasks: { build: { command: 'mkdir -p dist/deep && cat src/*.js > dist/out.js && cp dist/out.js dist/deep/copy.js', inputs: ['src/**'], outputs: ['dist/**'] } },
})
`,
		".gitignore":              "dist/\n.vx/\n",
		"packages/a/package.json": `{"name": "a"}`,
		"packages/a/src/a.js":     "export const a = 1\n",
		"packages/b/package.json": `{"name": "b"}`,
		"packages/b/src/b.js":     "export const b = 1\n",
	})
	gitInit(t, dir)
	s := startRunSession(t, dir)
	run := func(step string, want string) {
		t.Helper()
		r := decodeRunAnswer(t, mustCallRunTool(t, s.cs, "runTasks", map[string]any{"tasks": []string{"build"}}, ""))
		if r.Summary == nil || !r.Summary.OK || len(r.Summary.Tasks) != 2 {
			t.Fatalf("%s: runTasks(build) = %+v", step, r)
		}
		for _, task := range r.Summary.Tasks {
			if task.Status != want {
				t.Fatalf("%s: %s %s, want %s", step, task.TaskID, task.Status, want)
			}
		}
		for _, p := range []string{"a", "b"} {
			for _, out := range []string{"dist/out.js", "dist/deep/copy.js"} {
				if text, err := os.ReadFile(filepath.Join(dir, "packages", p, out)); err != nil || string(text) != "export const "+p+" = 1\n" {
					t.Fatalf("%s: packages/%s/%s reads %q (%v)", step, p, out, text, err)
				}
			}
			entries, _ := os.ReadDir(filepath.Join(dir, "packages", p, "dist"))
			if len(entries) != 2 {
				t.Fatalf("%s: packages/%s/dist holds %d entries, want out.js and deep", step, p, len(entries))
			}
		}
	}
	run("the first", "miss")
	for round, damage := range []map[string]string{
		{"packages/a/dist/out.js": "", "packages/b/dist/out.js": "export const x = 1\n"},
		{"packages/b/dist/deep/copy.js": "export const b = 2\n", "packages/a/dist/stray.js": "stray\n"},
		{"packages/a/dist/deep/new/more.js": "more\n", "packages/b/dist/deep": ""},
		{},
	} {
		run(fmt.Sprintf("round %d, before", round), "hit")
		for rel, text := range damage {
			if text == "" {
				if err := os.RemoveAll(filepath.Join(dir, rel)); err != nil {
					t.Fatal(err)
				}
				continue
			}
			testkit.WriteTree(t, dir, map[string]string{rel: text})
		}
		run(fmt.Sprintf("round %d, after %v", round, slices.Sorted(maps.Keys(damage))), "hit")
	}
	if err := s.eof(t); err != nil {
		t.Fatal(err)
	}
}

// sameLean reports whether a tool's document got is the CLI's want with the rows of passed and hit
// tasks lean: every member equal, but that got's task rows and totals may leave out members, and
// each member a row or the totals keep is want's; got may leave out the members that restate the
// totals in the original's names. A row that did not pass is equal whole.
func sameLean(got, want json.RawMessage) bool {
	var g, w map[string]any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil {
		return false
	}
	for k := range g {
		if _, ok := w[k]; !ok {
			return false
		}
	}
	subset := func(g, w any) bool {
		gm, ok1 := g.(map[string]any)
		wm, ok2 := w.(map[string]any)
		if !ok1 || !ok2 {
			return false
		}
		for k, v := range gm {
			if !reflect.DeepEqual(v, wm[k]) {
				return false
			}
		}
		return true
	}
	for k, wv := range w {
		gv, ok := g[k]
		switch {
		case !ok:
			// A runTasks answer leaves out what restates its totals in the original's names, and
			// vx last's invocation.
			if !slices.Contains([]string{"endedAt", "totalMs", "summary", "aborted", "invocation"}, k) {
				return false
			}
		case k == "totals":
			if !subset(gv, wv) {
				return false
			}
		case k == "tasks":
			gl, ok1 := gv.([]any)
			wl, ok2 := wv.([]any)
			if !ok1 || !ok2 || len(gl) != len(wl) {
				return false
			}
			for i := range gl {
				row, _ := wl[i].(map[string]any)
				passed := row["status"] == "hit" || row["status"] == "miss" || row["cache"] == "hit"
				if passed && !subset(gl[i], wl[i]) || !passed && !reflect.DeepEqual(gl[i], wl[i]) {
					return false
				}
			}
		default:
			if !reflect.DeepEqual(gv, wv) {
				return false
			}
		}
	}
	return true
}
