package actor_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vzn/vx/actor"
	"github.com/vzn/vx/actor/actortest"
)

// TestOfficialClient drives the real server process with the official Go SDK
// client, once per revision it speaks: the SDK asks for 2026-07-28 through
// server/discover and the older ones through initialize.
func TestOfficialClient(t *testing.T) {
	for _, rev := range mcp.SupportedProtocolVersions() {
		t.Run(rev, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd, err := actortest.Command()
			if err != nil {
				t.Fatal(err)
			}
			stderr := &actortest.SyncBuffer{}
			cmd.Stderr = stderr
			var mu sync.Mutex
			var progress []float64
			var messages []string
			client := mcp.NewClient(&mcp.Implementation{Name: "actor-test", Version: "1"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					defer mu.Unlock()
					progress = append(progress, req.Params.Progress)
					messages = append(messages, req.Params.Message)
				},
			})
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: rev})
			if err != nil {
				t.Fatalf("connect: %v; stderr:\n%s", err, stderr)
			}
			closed := false
			defer func() {
				if !closed {
					cs.Close()
				}
			}()
			if got := cs.InitializeResult().ProtocolVersion; got != rev {
				t.Fatalf("negotiated %s, want %s", got, rev)
			}
			if info := cs.InitializeResult().ServerInfo; rev == actor.Rev20260728 && (info == nil || info.Name != "vx-test") {
				t.Errorf("server/discover serverInfo = %+v", info)
			}

			listed, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			if len(listed.Tools) != len(testTools()) {
				t.Fatalf("listed %d tools", len(listed.Tools))
			}
			for _, tool := range listed.Tools {
				if tool.Name != "echo" {
					continue
				}
				newer := rev >= actor.Rev20250618
				if (tool.Title == "Echo") != newer || (tool.OutputSchema != nil) != newer {
					t.Errorf("echo under %s: title %q, outputSchema %v", rev, tool.Title, tool.OutputSchema)
				}
				if (tool.Annotations != nil) != (rev >= actor.Rev20250326) {
					t.Errorf("echo under %s: annotations %+v", rev, tool.Annotations)
				}
			}

			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"greeting": "hi"}})
			if err != nil || res.IsError {
				t.Fatalf("echo: %v %+v", err, res)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if !strings.Contains(text, `"greeting":"hi"`) || !strings.Contains(text, `"revision":"`+rev+`"`) {
				t.Errorf("echo text %s", text)
			}
			if (res.StructuredContent != nil) != (rev >= actor.Rev20250618) {
				t.Errorf("structuredContent under %s: %v", rev, res.StructuredContent)
			}

			params := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 3, "ms": 1}}
			params.SetProgressToken("p-1")
			if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
				t.Fatalf("progress: %v %+v", err, res)
			}

			if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "refuse"}); err != nil || !res.IsError ||
				res.Content[0].(*mcp.TextContent).Text != `argument "task" must be ***` {
				t.Errorf("refuse: %v %+v", err, res)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope"}); err == nil || !strings.Contains(err.Error(), `unknown tool "nope"`) {
				t.Errorf("unknown tool: %v", err)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "panic"}); err == nil || !strings.Contains(err.Error(), "panicked") {
				t.Errorf("panic: %v", err)
			}

			// A cancelled call: the SDK sends notifications/cancelled; the server
			// lives on and answers the next call.
			short, stop := context.WithTimeout(ctx, 100*time.Millisecond)
			_, err = cs.CallTool(short, &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 30000}})
			stop()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("cancelled call: %v", err)
			}
			if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "printer"}); err != nil || res.IsError {
				t.Errorf("printer: %v %+v", err, res)
			}
			if rev < actor.Rev20260728 {
				if err := cs.Ping(ctx, nil); err != nil {
					t.Errorf("ping: %v", err)
				}
			}

			if err := cs.Close(); err != nil {
				t.Errorf("close (EOF, exit status): %v; stderr:\n%s", err, stderr)
			}
			closed = true
			mu.Lock()
			defer mu.Unlock()
			if len(progress) != 3 || progress[0] != 1 || progress[2] != 3 {
				t.Errorf("progress notifications %v", progress)
			}
			for _, m := range messages {
				if (m != "") != (rev >= actor.Rev20250326) || strings.Contains(m, actortest.Secret) {
					t.Errorf("progress message %q under %s", m, rev)
				}
			}
			if !strings.Contains(stderr.String(), markChild) {
				t.Errorf("the printer's child output is not on stderr:\n%s", stderr)
			}
		})
	}
}

// Gemini CLI adds wait_for_previous to every tool it shows its model and passes it through: sent
// by the official client as the host sends it, it reaches no tool and the call succeeds; any
// other key the tool does not take is still refused by name.
func TestOfficialClientHostKeys(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, err := actortest.Command()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &actortest.SyncBuffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "actor-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v; stderr:\n%s", err, stderr)
	}
	defer cs.Close()
	call := func(name string, args map[string]any) (*mcp.CallToolResult, string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s(%v): %v", name, args, err)
		}
		return res, res.Content[0].(*mcp.TextContent).Text
	}
	if res, text := call("sleep", map[string]any{"ms": 1, "wait_for_previous": true}); res.IsError || text != `{"slept":1}` {
		t.Errorf("sleep with wait_for_previous: %s", text)
	}
	if res, text := call("echo", map[string]any{"greeting": "hi", "wait_for_previous": false}); res.IsError ||
		strings.Contains(text, "wait_for_previous") || !strings.Contains(text, `"greeting":"hi"`) {
		t.Errorf("echo with wait_for_previous: %s", text)
	}
	if res, text := call("sleep", map[string]any{"bogus": 1}); !res.IsError || text != `unknown argument "bogus" (accepted: ms, ignoreCancel)` {
		t.Errorf("sleep with bogus: %s", text)
	}
	if res, text := call("sleep", map[string]any{"bogus": 1, "wait_for_previous": true}); !res.IsError || text != `unknown argument "bogus" (accepted: ms, ignoreCancel)` {
		t.Errorf("sleep with bogus and wait_for_previous: %s", text)
	}
}
