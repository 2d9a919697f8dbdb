package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// taskV1 is a task as 2025-11-25 answers it.
type taskV1 struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	PollInterval  int    `json:"pollInterval"`
}

// runAnswerOf decodes a CallToolResult's structured runTasks answer.
func runAnswerOf(t *testing.T, result json.RawMessage) (runID string, exitCode int, isError bool) {
	t.Helper()
	var r struct {
		StructuredContent struct {
			ExitCode int `json:"exitCode"`
			Summary  struct {
				RunID string `json:"runId"`
			} `json:"summary"`
		} `json:"structuredContent"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		t.Fatalf("%s: %v", result, err)
	}
	return r.StructuredContent.Summary.RunID, r.StructuredContent.ExitCode, r.IsError
}

// A 2025-11-25 client that declares tasks runs runTasks as a task: the call answers the task at
// once, its id the run's; tasks/get and tasks/list follow it, progress and a status notification
// keep coming after the call's answer; tasks/cancel stops the run and every process it started;
// tasks/result of another answers the runTasks answer, tied to its task.
func TestMCPTasks20251125(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, runToolsWorkspace(""))
	pidsDir := t.TempDir()
	pidsFile := filepath.Join(pidsDir, "pids")
	killRunLeftovers(t, pidsFile)
	c := startRawClient(t, dir, nil, "PIDS_DIR="+pidsDir)

	init := c.initialize("2025-11-25", map[string]any{"tasks": map[string]any{"list": map[string]any{}, "cancel": map[string]any{}}})
	if !strings.Contains(string(init), `"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`) {
		t.Errorf("initialize does not declare tasks: %s", init)
	}
	var list struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	c.result("tools/list", map[string]any{}, &list)
	for _, tl := range list.Tools {
		if (tl.Name == "runTasks") != (tl.Execution != nil && tl.Execution.TaskSupport == "optional") {
			t.Errorf("tools/list: %s has execution %+v", tl.Name, tl.Execution)
		}
	}

	// A slow run, as a task: answered at once, working; cancelled, nothing of it is left.
	var created struct {
		Task taskV1 `json:"task"`
	}
	c.result("tools/call", map[string]any{"name": "runTasks", "arguments": map[string]any{"tasks": []string{"slow"}},
		"task": map[string]any{"ttl": 60000}, "_meta": map[string]any{"progressToken": "slow"}}, &created)
	slow := created.Task
	if slow.TaskID == "" || slow.Status != "working" || slow.CreatedAt == "" || slow.PollInterval <= 0 {
		t.Fatalf("created task = %+v", slow)
	}
	c.waitNotification("notifications/progress", `"run `+slow.TaskID+` started`, `"io.modelcontextprotocol/related-task":{"taskId":"`+slow.TaskID+`"}`)
	pids := readRunPids(t, pidsFile, 2)
	runPid := readRunPids(t, filepath.Join(pidsDir, "runpid"), 1)[0]
	var got taskV1
	c.result("tasks/get", map[string]any{"taskId": slow.TaskID}, &got)
	if got.Status != "working" {
		t.Errorf("tasks/get of the slow run = %+v", got)
	}
	var listed struct {
		Tasks []taskV1 `json:"tasks"`
	}
	c.result("tasks/list", map[string]any{}, &listed)
	if len(listed.Tasks) != 1 || listed.Tasks[0].TaskID != slow.TaskID {
		t.Errorf("tasks/list = %+v", listed)
	}
	c.result("tasks/cancel", map[string]any{"taskId": slow.TaskID}, &got)
	if got.Status != "cancelled" {
		t.Errorf("tasks/cancel = %+v", got)
	}
	expectRunGone(t, "after tasks/cancel", append(pids, runPid), 10*time.Second)
	if r := c.request("tasks/cancel", map[string]any{"taskId": slow.TaskID}); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("tasks/cancel of a cancelled task = %+v", r)
	}
	if r := c.request("tasks/result", map[string]any{"taskId": slow.TaskID}); r.Error == nil {
		t.Errorf("tasks/result of a cancelled task = %s", r.Result)
	}

	// A run that finishes: polled until completed, its result the runTasks answer.
	c.result("tools/call", map[string]any{"name": "runTasks", "arguments": map[string]any{"tasks": []string{"test"}},
		"task": map[string]any{}, "_meta": map[string]any{"progressToken": "test"}}, &created)
	id := created.Task.TaskID
	// Progress goes on past the call's answer, to the last task of the run, tied to the task.
	c.waitNotification("notifications/progress", `"progressToken":"test","progress":4,"total":4`,
		`"io.modelcontextprotocol/related-task":{"taskId":"`+id+`"}`)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		c.result("tasks/get", map[string]any{"taskId": id}, &got)
		if got.Status != "working" || time.Now().After(deadline) {
			break
		}
	}
	if got.Status != "completed" {
		t.Fatalf("tasks/get of the test run = %+v", got)
	}
	c.waitNotification("notifications/tasks/status", `"taskId":"`+id+`"`, `"status":"completed"`)
	r := c.request("tasks/result", map[string]any{"taskId": id})
	if r.Error != nil {
		t.Fatalf("tasks/result: %+v", r.Error)
	}
	runID, exit, isError := runAnswerOf(t, r.Result)
	if runID != id || exit != 0 || isError || !strings.Contains(string(r.Result), `"io.modelcontextprotocol/related-task":{"taskId":"`+id+`"}`) {
		t.Errorf("tasks/result = %s", r.Result)
	}
	if last := string(cliJSON(t, dir, "last", "--run", id)); !strings.Contains(last, `"runId":"`+id+`"`) {
		t.Errorf("vx last --run %s = %s", id, last)
	}
	if r := c.request("tasks/get", map[string]any{"taskId": "nope"}); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("tasks/get of no task = %+v", r)
	}
}

// taskExt is a task as the tasks extension answers it.
type taskExt struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	CreatedAt      string          `json:"createdAt"`
	PollIntervalMs int             `json:"pollIntervalMs"`
	Result         json.RawMessage `json:"result"`
}

// A stateless client that declares the io.modelcontextprotocol/tasks extension on its request is
// answered resultType "task"; tasks/get polls it and answers the result inline once completed;
// tasks/cancel stops the run; one that does not declare it is answered the run itself.
func TestMCPTasksExtension(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, runToolsWorkspace(""))
	pidsDir := t.TempDir()
	pidsFile := filepath.Join(pidsDir, "pids")
	killRunLeftovers(t, pidsFile)
	c := startRawClient(t, dir, nil, "PIDS_DIR="+pidsDir)

	var disc struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	c.result("server/discover", map[string]any{"_meta": statelessMeta(map[string]any{})}, &disc)
	if !strings.Contains(string(disc.Capabilities["extensions"]), `"io.modelcontextprotocol/tasks":{}`) {
		t.Errorf("server/discover capabilities = %s", disc.Capabilities)
	}
	ext := statelessMeta(map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}})
	meta := func() map[string]any { return ext }

	var slow taskExt
	c.result("tools/call", map[string]any{"name": "runTasks", "arguments": map[string]any{"tasks": []string{"slow"}}, "_meta": meta()}, &slow)
	if slow.ResultType != "task" || slow.Status != "working" || slow.TaskID == "" || slow.PollIntervalMs <= 0 {
		t.Fatalf("tools/call as a task = %+v", slow)
	}
	pids := readRunPids(t, pidsFile, 2)
	runPid := readRunPids(t, filepath.Join(pidsDir, "runpid"), 1)[0]
	var got taskExt
	c.result("tasks/get", map[string]any{"taskId": slow.TaskID, "_meta": meta()}, &got)
	if got.ResultType != "complete" || got.Status != "working" {
		t.Errorf("tasks/get = %+v", got)
	}
	c.result("tasks/update", map[string]any{"taskId": slow.TaskID, "inputResponses": map[string]any{}, "_meta": meta()}, &got)
	c.result("tasks/cancel", map[string]any{"taskId": slow.TaskID, "_meta": meta()}, &got)
	if got.ResultType != "complete" {
		t.Errorf("tasks/cancel = %+v", got)
	}
	expectRunGone(t, "after tasks/cancel", append(pids, runPid), 10*time.Second)
	c.result("tasks/get", map[string]any{"taskId": slow.TaskID, "_meta": meta()}, &got)
	if got.Status != "cancelled" || got.Result != nil {
		t.Errorf("tasks/get after tasks/cancel = %+v", got)
	}

	var done taskExt
	c.result("tools/call", map[string]any{"name": "runTasks", "arguments": map[string]any{"tasks": []string{"fail"}}, "_meta": meta()}, &done)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		c.result("tasks/get", map[string]any{"taskId": done.TaskID, "_meta": meta()}, &got)
		if got.Status != "working" || time.Now().After(deadline) {
			break
		}
	}
	// A run whose task failed is a tool answer like any other: completed, the answer inline.
	runID, exit, _ := runAnswerOf(t, got.Result)
	if got.Status != "completed" || runID != done.TaskID || exit != 1 {
		t.Errorf("tasks/get of the finished run = %+v (%s)", got, got.Result)
	}

	// Without the extension on the request, the call is answered the run.
	var plain json.RawMessage
	c.result("tools/call", map[string]any{"name": "runTasks", "arguments": map[string]any{"tasks": []string{"test"}},
		"_meta": statelessMeta(map[string]any{})}, &plain)
	if runID, exit, _ := runAnswerOf(t, plain); runID == "" || exit != 0 || strings.Contains(string(plain), `"resultType":"task"`) {
		t.Errorf("tools/call without the extension = %s", plain)
	}
	if r := c.request("tasks/list", map[string]any{"_meta": meta()}); r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("tasks/list under the extension = %+v", r)
	}
}

// A task outlives the request that started it, not the server: the end of stdin stops its run and
// every process the run started before the server exits.
func TestMCPTaskEndsWithTheServer(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, runToolsWorkspace(""))
	pidsDir := t.TempDir()
	pidsFile := filepath.Join(pidsDir, "pids")
	killRunLeftovers(t, pidsFile)
	c := startRawClient(t, dir, nil, "PIDS_DIR="+pidsDir)
	c.initialize("2025-11-25", map[string]any{"tasks": map[string]any{}})
	var created struct {
		Task taskV1 `json:"task"`
	}
	c.result("tools/call", map[string]any{"name": "runTasks", "arguments": map[string]any{"tasks": []string{"slow"}},
		"task": map[string]any{}}, &created)
	pids := readRunPids(t, pidsFile, 2)
	runPid := readRunPids(t, filepath.Join(pidsDir, "runpid"), 1)[0]
	var got taskV1
	c.result("tasks/get", map[string]any{"taskId": created.Task.TaskID}, &got)
	if got.Status != "working" {
		t.Fatalf("tasks/get = %+v", got)
	}
	c.stdin.Close()
	select {
	case err := <-c.done:
		if err != nil {
			t.Errorf("vx mcp exited: %v", err)
		}
		c.done <- err // for the cleanup
	case <-time.After(30 * time.Second):
		t.Fatal("vx mcp did not exit after EOF with a task running")
	}
	expectRunGone(t, "after EOF", append(pids, runPid), 10*time.Second)
}
