package main

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
)

// toolText decodes a CallToolResult's text and isError.
func toolText(t *testing.T, result json.RawMessage) (string, bool) {
	t.Helper()
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(result, &r); err != nil || len(r.Content) != 1 {
		t.Fatalf("%s: %v", result, err)
	}
	return r.Content[0].Text, r.IsError
}

// A client that declared form elicitation is asked before runTasks runs a task outside
// mcp({ run }) and before pruneCache removes: declined, nothing runs or goes; accepted, it does.
func TestMCPConfirmElicitation(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, runToolsWorkspace("{ run: ['test'] }"))
	var accept atomic.Bool
	c := startRawClient(t, dir, func(method string, params json.RawMessage) any {
		if accept.Load() {
			return map[string]any{"action": "accept", "content": map[string]any{}}
		}
		return map[string]any{"action": "decline"}
	})
	c.initialize("2025-06-18", map[string]any{"elicitation": map[string]any{}})

	call := func(name string, args map[string]any) (string, bool) {
		var res json.RawMessage
		c.result("tools/call", map[string]any{"name": name, "arguments": args}, &res)
		return toolText(t, res)
	}
	text, isError := call("runTasks", map[string]any{"tasks": []string{"deploy"}})
	if !isError || !strings.Contains(text, "the user declined") || !strings.Contains(text, `"deploy"`) {
		t.Errorf("runTasks deploy, declined = %s", text)
	}
	if len(c.questions()) != 1 || !strings.Contains(string(c.questions()[0]), `"method":"elicitation/create"`) ||
		!strings.Contains(string(c.questions()[0]), "Run deploy?") || strings.Contains(string(c.questions()[0]), `"mode"`) {
		t.Errorf("the server asked %s", c.questions())
	}
	accept.Store(true)
	if text, isError := call("runTasks", map[string]any{"tasks": []string{"deploy"}}); isError || !strings.Contains(text, `"exitCode":0`) {
		t.Errorf("runTasks deploy, accepted = %s", text)
	}
	// A task mcp({ run }) allows is run without asking.
	asked := len(c.questions())
	if text, isError := call("runTasks", map[string]any{"tasks": []string{"test"}}); isError || len(c.questions()) != asked {
		t.Errorf("runTasks test = %s, asked %d times", text, len(c.questions())-asked)
	}

	// pruneCache: a dry run asks nothing; a prune that removes asks, saying what would go.
	call("pruneCache", map[string]any{})
	if len(c.questions()) != asked {
		t.Errorf("a dry run asked the user")
	}
	accept.Store(false)
	if text, isError := call("pruneCache", map[string]any{"maxSize": "0", "dryRun": false}); !isError || !strings.Contains(text, "declined") {
		t.Errorf("pruneCache declined = %s", text)
	}
	if !strings.Contains(string(c.questions()[len(c.questions())-1]), "Remove 4 cache entries") {
		t.Errorf("the prune asked %s", c.questions()[len(c.questions())-1])
	}
	if stats := string(cliJSON(t, dir, "cache", "stats")); !strings.Contains(stats, `"entries":4`) {
		t.Errorf("a declined prune removed entries: %s", stats)
	}
	accept.Store(true)
	if text, isError := call("pruneCache", map[string]any{"maxSize": "0", "dryRun": false}); isError || !strings.Contains(text, `"taskId":"app#build"`) {
		t.Errorf("pruneCache accepted = %s", text)
	}
}

// A 2025-11-25 client is asked in form mode; one that declared no elicitation is refused as before
// (runTasks) or not asked (pruneCache).
func TestMCPConfirmNeedsTheCapability(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, runToolsWorkspace("{ run: ['test'] }"))
	c := startRawClient(t, dir, func(string, json.RawMessage) any { return map[string]any{"action": "cancel"} })
	c.initialize("2025-11-25", map[string]any{"elicitation": map[string]any{"form": map[string]any{}}})
	var res json.RawMessage
	c.result("tools/call", map[string]any{"name": "runTasks", "arguments": map[string]any{"tasks": []string{"deploy"}}}, &res)
	if text, isError := toolText(t, res); !isError || !strings.Contains(text, "declined") || len(c.questions()) != 1 ||
		!strings.Contains(string(c.questions()[0]), `"mode":"form"`) {
		t.Errorf("runTasks deploy, cancelled = %s; asked %s", text, c.questions())
	}

	plain := startRawClient(t, dir, nil)
	plain.initialize("2025-11-25", map[string]any{})
	plain.result("tools/call", map[string]any{"name": "runTasks", "arguments": map[string]any{"tasks": []string{"deploy"}}}, &res)
	if text, isError := toolText(t, res); !isError || !strings.Contains(text, `task "deploy" is not one this workspace's mcp({ run }) lets an agent run`) {
		t.Errorf("runTasks deploy without elicitation = %s", text)
	}
	plain.result("tools/call", map[string]any{"name": "pruneCache", "arguments": map[string]any{"dryRun": false}}, &res)
	if text, isError := toolText(t, res); isError || len(plain.questions()) != 0 {
		t.Errorf("pruneCache without elicitation = %s, asked %s", text, plain.questions())
	}
}

// A stateless client that declares elicitation is answered input_required with the question; it
// calls again with the answer and the requestState, and is answered then. A state that was not the
// server's, or one for other arguments, asks again.
func TestMCPConfirmInputRequired(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, runToolsWorkspace("{ run: ['test'] }"))
	c := startRawClient(t, dir, nil)
	meta := statelessMeta(map[string]any{"elicitation": map[string]any{}})
	args := map[string]any{"tasks": []string{"deploy"}}

	type inputRequired struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
	}
	var ask inputRequired
	c.result("tools/call", map[string]any{"name": "runTasks", "arguments": args, "_meta": meta}, &ask)
	if ask.ResultType != "input_required" || ask.RequestState == "" ||
		!strings.Contains(string(ask.InputRequests["confirm"]), `"method":"elicitation/create"`) ||
		!strings.Contains(string(ask.InputRequests["confirm"]), "Run deploy?") {
		t.Fatalf("runTasks deploy = %+v", ask)
	}
	answer := func(action, state string, args map[string]any) json.RawMessage {
		var res json.RawMessage
		c.result("tools/call", map[string]any{"name": "runTasks", "arguments": args, "_meta": meta, "requestState": state,
			"inputResponses": map[string]any{"confirm": map[string]any{"action": action}}}, &res)
		return res
	}
	if res := answer("accept", ask.RequestState+"x", args); !strings.Contains(string(res), `"resultType":"input_required"`) {
		t.Errorf("a tampered state = %s", res)
	}
	if res := answer("accept", ask.RequestState, map[string]any{"tasks": []string{"deploy"}, "force": true}); !strings.Contains(string(res), `"resultType":"input_required"`) {
		t.Errorf("a state for other arguments = %s", res)
	}
	if text, isError := toolText(t, answer("decline", ask.RequestState, args)); !isError || !strings.Contains(text, "declined") {
		t.Errorf("declined = %s", text)
	}
	if text, isError := toolText(t, answer("accept", ask.RequestState, args)); isError || !strings.Contains(text, `"exitCode":0`) {
		t.Errorf("accepted = %s", text)
	}
	// Without elicitation declared, the refusal stands.
	var res json.RawMessage
	c.result("tools/call", map[string]any{"name": "runTasks", "arguments": args, "_meta": statelessMeta(map[string]any{})}, &res)
	if text, isError := toolText(t, res); !isError || !strings.Contains(text, "is not one this workspace's mcp({ run })") {
		t.Errorf("without elicitation = %s", text)
	}
}

// mcp({ tools }) lists only the tools it names, as nx-mcp's --tools does; a name that is no tool
// is refused when the config loads, every stray name given with the known ones.
func TestMCPToolsOption(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, runToolsWorkspace("{ tools: ['runTasks', 'getFailures'] }"))
	c := startRawClient(t, dir, nil)
	c.initialize("2025-06-18", map[string]any{})
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	c.result("tools/list", map[string]any{}, &list)
	if len(list.Tools) != 2 || list.Tools[0].Name != "getFailures" || list.Tools[1].Name != "runTasks" {
		t.Errorf("tools/list = %+v", list)
	}
	if r := c.request("tools/call", map[string]any{"name": "listTasks", "arguments": map[string]any{}}); r.Error == nil ||
		r.Error.Code != -32602 || !strings.Contains(r.Error.Message, `unknown tool "listTasks"`) {
		t.Errorf("listTasks outside mcp({ tools }) = %+v", r)
	}

	bad := writeWorkspace(t, runToolsWorkspace("{ tools: ['runTasks', 'runTask', 'lint'] }"))
	out, err := vxCommand(t, bad, "show").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `mcp({ tools }) names no tool of vx mcp: "runTask", "lint" (known: listTasks,`) {
		t.Errorf("vx show with unknown tools: %v\n%s", err, out)
	}
}
