package actor_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/vzn/vx/actor"
	"github.com/vzn/vx/actor/actortest"
)

func TestToolsCall(t *testing.T) {
	s := startClient(t, nil)
	initialize(s, "2025-06-18")
	r := s.call(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"x":[1,"two"]}}}`)
	var content []struct{ Type, Text string }
	r.field(t, "content", &content)
	var structured json.RawMessage
	r.field(t, "structuredContent", &structured)
	if len(content) != 1 || content[0].Type != "text" || content[0].Text != string(structured) {
		t.Fatalf("text content is not the structured JSON: %s", r.raw)
	}
	if string(structured) != `{"args":{"x":[1,"two"]},"revision":"2025-06-18"}` {
		t.Fatalf("structuredContent = %s", structured)
	}
	if r.has(t, "isError") || r.has(t, "resultType") {
		t.Fatalf("unexpected isError/resultType: %s", r.raw)
	}
	// No arguments at all: the tool gets {}.
	r = s.call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`)
	r.field(t, "structuredContent", &structured)
	if string(structured) != `{"args":{},"revision":"2025-06-18"}` {
		t.Fatalf("structuredContent without arguments = %s", structured)
	}
	// A scalar answer has no structuredContent before the stateless revision.
	r = s.call(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"scalar"}}`)
	if r.has(t, "structuredContent") {
		t.Fatalf("scalar structuredContent under 2025-06-18: %s", r.raw)
	}
	r = s.call(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"scalar",` + stateless + `}}`)
	r.field(t, "structuredContent", &structured)
	var resultType string
	r.field(t, "resultType", &resultType)
	if string(structured) != "42" || resultType != "complete" {
		t.Fatalf("scalar under 2026-07-28: %s", r.raw)
	}
	var meta map[string]struct{ Name string }
	r.field(t, "_meta", &meta)
	if meta["io.modelcontextprotocol/serverInfo"].Name != "vx-test" {
		t.Fatalf("stateless result lacks serverInfo: %s", r.raw)
	}
}

func TestToolsCallOldRevisionsOmitStructuredContent(t *testing.T) {
	for _, rev := range []string{"2024-11-05", "2025-03-26"} {
		s := startClient(t, nil)
		initialize(s, rev)
		r := s.call(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":1}}}`)
		if r.has(t, "structuredContent") {
			t.Fatalf("%s: structuredContent present: %s", rev, r.raw)
		}
		var content []struct{ Text string }
		r.field(t, "content", &content)
		if content[0].Text != `{"args":{"a":1},"revision":"`+rev+`"}` {
			t.Fatalf("%s: text = %s", rev, content[0].Text)
		}
	}
}

func TestToolErrorsAndRefusals(t *testing.T) {
	s := startClient(t, nil)
	initialize(s, "2025-11-25")
	for _, tc := range []struct{ tool, want string }{
		{"refuse", `argument "task" must be ***`},
		{"fail", "config failed to load: token ***"},
	} {
		r := s.call(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tc.tool + `"}}`)
		var isError bool
		r.field(t, "isError", &isError)
		var content []struct{ Text string }
		r.field(t, "content", &content)
		if !isError || content[0].Text != tc.want || r.has(t, "structuredContent") {
			t.Fatalf("%s: %s", tc.tool, r.raw)
		}
	}
	// A tool's own DecodeArgs refusal is an isError result too.
	r := s.call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"msec":1}}}`)
	var content []struct{ Text string }
	r.field(t, "content", &content)
	if content[0].Text != `unknown argument "msec" (accepted: ms, ignoreCancel)` {
		t.Fatalf("refusal text %q", content[0].Text)
	}
}

func TestProtocolErrors(t *testing.T) {
	s := startClient(t, nil)
	initialize(s, "2025-11-25")
	for _, tc := range []struct {
		line, id string
		code     int64
		contains string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"nope"}`, "1", -32601, `"nope"`},
		{`{"jsonrpc":"2.0","id":"a","method":"resources/list"}`, `"a"`, -32601, "resources/list"},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope"}}`, "2", -32602, `unknown tool "nope"`},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":"x"}}`, "3", -32602, "arguments must be an object"},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":["x"]}}`, "4", -32602, "arguments must be an object"},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":null}}`, "5", -32602, "arguments must be an object"},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":7}}`, "6", -32602, "name"},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call"}`, "7", -32602, "params"},
		{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":["echo"]}`, "8", -32602, "object"},
		{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"panic"}}`, "9", -32603, "tool panicked on purpose: ***"},
		{`{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":5}}`, "10", -32602, "protocolVersion"},
		{`{"jsonrpc":"2.0","id":1`, "null", -32700, "parse error"},
		{`not json`, "null", -32700, "parse error"},
		{`[1,`, "null", -32700, "parse error"},
		{`42`, "null", -32600, "object"},
		{`"x"`, "null", -32600, "object"},
		{`null`, "null", -32600, "object"},
		{`[]`, "null", -32600, "empty batch"},
		{`{"jsonrpc":"1.0","id":11,"method":"ping"}`, "11", -32600, "jsonrpc"},
		{`{"id":12,"method":"ping"}`, "12", -32600, "jsonrpc"},
		{`{"jsonrpc":"2.0","id":13}`, "13", -32600, "method"},
		{`{"jsonrpc":"2.0","id":14,"method":7}`, "14", -32600, "method"},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, "null", -32600, "id"},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, "null", -32600, "id"},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, "null", -32600, "id"},
		{`{"jsonrpc":"2.0","id":15,"method":"ping","params":5}`, "15", -32600, "params"},
		{`{"jsonrpc":"2.0","method":"ping","params":"x"}`, "null", -32600, "params"},
		{`{"jsonrpc":"2.0","id":16,"method":"tools/list",` + `"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}}`, "16", -32022, "2099-01-01"},
	} {
		r := s.call(tc.line)
		wantError(t, r, tc.id, tc.code, tc.contains)
	}
	// The server lives on after the panic, and answers what comes next.
	if r := s.call(`{"jsonrpc":"2.0","id":"after","method":"ping"}`); r.Error != nil || string(r.Result) != "{}" {
		t.Fatalf("ping after errors: %s", r.raw)
	}
	// A response the server never asked for, and unknown notifications, get nothing.
	s.send(`{"jsonrpc":"2.0","id":99,"result":{}}`)
	s.send(`{"jsonrpc":"2.0","method":"notifications/whatever","params":{}}`)
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12345}}`)
	s.send(``)
	s.send(`   `)
	s.barrier()
	if err := s.closeAndWait(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(s.log.String(), actortest.Secret) {
		t.Fatalf("a secret reached the log:\n%s", s.log)
	}
}

func TestProgress(t *testing.T) {
	for _, rev := range []string{"2024-11-05", "2025-06-18"} {
		s := startClient(t, nil)
		initialize(s, rev)
		s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"progress","arguments":{"steps":4,"ms":1},"_meta":{"progressToken":"tok"}}}`)
		var seen []float64
		for {
			r := s.recvMsg()
			if r.Method == "" {
				if string(r.ID) != "1" || r.Error != nil {
					t.Fatalf("reply: %s", r.raw)
				}
				break
			}
			var p struct {
				ProgressToken string   `json:"progressToken"`
				Progress      float64  `json:"progress"`
				Total         *float64 `json:"total"`
				Message       *string  `json:"message"`
			}
			if err := json.Unmarshal(r.Params, &p); err != nil || r.Method != "notifications/progress" || p.ProgressToken != "tok" {
				t.Fatalf("notification: %s", r.raw)
			}
			if p.Total == nil || *p.Total != 4 {
				t.Fatalf("total: %s", r.raw)
			}
			if (p.Message != nil) != (rev != "2024-11-05") {
				t.Fatalf("%s: message presence wrong: %s", rev, r.raw)
			}
			if p.Message != nil && strings.Contains(*p.Message, actortest.Secret) {
				t.Fatalf("secret in progress: %s", r.raw)
			}
			seen = append(seen, p.Progress)
		}
		if !slices.Equal(seen, []float64{1, 2, 3, 4}) {
			t.Fatalf("%s: progress %v, want 1..4 strictly increasing", rev, seen)
		}
		// Without a token: no notifications, just the reply.
		r := s.call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"progress","arguments":{"steps":3,"ms":1}}}`)
		if string(r.ID) != "2" {
			t.Fatalf("without token: %s", r.raw)
		}
		s.barrier()
	}
}

func TestOversizeLine(t *testing.T) {
	s := startClient(t, func(c *actor.Config) { c.MaxLineBytes = 1024 })
	initialize(s, "2025-11-25")
	big := strings.Repeat("x", 5000)
	r := s.call(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"s":"` + big + `"}}}`)
	wantError(t, r, "7", -32600, "exceeds the 1024-byte limit")
	// The id is found only at the line's start; elsewhere the reply is id null.
	r = s.call(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"s":"` + big + `"}},"id":8}`)
	wantError(t, r, "null", -32600, "exceeds")
	// Reading goes on: a line of exactly the limit is read.
	line := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"s":"`
	line += strings.Repeat("y", 1024-len(line)-len(`"}}}`)) + `"}}}`
	if len(line) != 1024 {
		t.Fatalf("test line is %d bytes", len(line))
	}
	if r := s.call(line); r.Error != nil {
		t.Fatalf("line of exactly the limit: %s", r.raw)
	}
}
