package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// claudeCode is the Claude Code release the turn-1 test runs, pinned (checked with npm view).
const claudeCode = "@anthropic-ai/claude-code@2.1.332"

// modelStandIn is a loopback stand-in of the model API: it keeps the body of every /v1/messages
// request and answers each with a streamed "hi".
type modelStandIn struct {
	mu     sync.Mutex
	bodies []json.RawMessage
}

func (m *modelStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if strings.Contains(r.URL.Path, "count_tokens") {
		w.Header().Set("content-type", "application/json")
		fmt.Fprint(w, `{"input_tokens":10}`)
		return
	}
	if !strings.HasSuffix(r.URL.Path, "/v1/messages") {
		http.NotFound(w, r)
		return
	}
	m.mu.Lock()
	m.bodies = append(m.bodies, body)
	m.mu.Unlock()
	w.Header().Set("content-type", "text/event-stream")
	for _, ev := range []struct{ name, data string }{
		{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}`},
		{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`},
		{"content_block_stop", `{"type":"content_block_stop","index":0}`},
		{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}`},
		{"message_stop", `{"type":"message_stop"}`},
	} {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.name, ev.data)
	}
}

// Claude Code, with its tool search on, gives the model on the first turn the whole definitions of
// runTasks and getFailures (their _meta["anthropic/alwaysLoad"]) and none of the other vx tools
// (deferred behind the search), and puts the server's instructions before the model: its request to
// a loopback stand-in of the model API shows it.
func TestClaudeCodeShowsRunTasksOnTurnOne(t *testing.T) {
	t.Parallel()
	modules := npmPackage(t, "claude-code-2.1.332", claudeCode)
	standIn := &modelStandIn{}
	srv := httptest.NewServer(standIn)
	defer srv.Close()
	dir := writeWorkspace(t, runToolsWorkspace(""))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "mcp.json")
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"vx": map[string]any{
		"command": exe, "args": []string{"mcp"}, "env": map[string]string{"VX_TEST_MAIN": "1"}}}})
	if err := os.WriteFile(config, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(modules, ".bin", "claude"), "-p", "say hi", "--mcp-config", config, "--strict-mcp-config")
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "HOME="+t.TempDir(), "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=sk-vx-test",
		"ENABLE_TOOL_SEARCH=true", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude -p: %v\n%s", err, out)
	}
	standIn.mu.Lock()
	defer standIn.mu.Unlock()
	if len(standIn.bodies) == 0 {
		t.Fatalf("claude sent the model nothing:\n%s", out)
	}
	var first struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"input_schema"`
			DeferLoading bool            `json:"defer_loading"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(standIn.bodies[0], &first); err != nil {
		t.Fatal(err)
	}
	var loaded []string
	for _, tl := range first.Tools {
		if strings.HasPrefix(tl.Name, "mcp__vx__") && !tl.DeferLoading && tl.InputSchema != nil {
			loaded = append(loaded, strings.TrimPrefix(tl.Name, "mcp__vx__"))
		}
	}
	if strings.Join(loaded, ",") != "getFailures,runTasks" && strings.Join(loaded, ",") != "runTasks,getFailures" {
		t.Errorf("vx tools the model sees whole on turn 1: %v", loaded)
	}
	if !strings.Contains(string(standIn.bodies[0]), "Prefer it to a shell") {
		t.Errorf("the first request does not carry the server's instructions")
	}
}
