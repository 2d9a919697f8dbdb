package actor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/actor"
	"github.com/vzn/vx/actor/actortest"
)

const stateless = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func initialize(s *session, rev string) reply {
	s.t.Helper()
	r := s.call(fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, rev))
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return r
}

func TestInitializeNegotiates(t *testing.T) {
	for asked, want := range map[string]string{
		"2024-11-05": "2024-11-05", "2025-03-26": "2025-03-26", "2025-06-18": "2025-06-18",
		"2025-11-25": "2025-11-25", "2026-07-28": "2025-11-25", "1999-01-01": "2025-11-25", "": "2025-11-25",
	} {
		s := startSession(t, nil)
		r := initialize(s, asked)
		var got string
		r.field(t, "protocolVersion", &got)
		if got != want {
			t.Errorf("asked %q: offered %q, want %q", asked, got, want)
		}
		var info struct{ Name, Version string }
		r.field(t, "serverInfo", &info)
		if info.Name != "vx-test" || info.Version != "1.2.3" {
			t.Errorf("serverInfo = %+v", info)
		}
		var caps map[string]map[string]bool
		r.field(t, "capabilities", &caps)
		if _, ok := caps["tools"]; !ok {
			t.Errorf("capabilities lack tools: %s", r.raw)
		}
		if r.has(t, "resultType") {
			t.Errorf("initialize result carries resultType: %s", r.raw)
		}
		if err := s.closeAndWait(); err != nil {
			t.Fatalf("Serve after EOF: %v", err)
		}
	}
}

type listedTool struct {
	Name         string          `json:"name"`
	Title        *string         `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Annotations  map[string]any  `json:"annotations"`
}

func listTools(t *testing.T, s *session, params string) ([]listedTool, reply) {
	t.Helper()
	r := s.call(`{"jsonrpc":"2.0","id":"list","method":"tools/list","params":{` + params + `}}`)
	if r.Error != nil {
		t.Fatalf("tools/list: %s", r.raw)
	}
	var ts []listedTool
	r.field(t, "tools", &ts)
	return ts, r
}

func findTool(t *testing.T, ts []listedTool, name string) listedTool {
	t.Helper()
	for _, tl := range ts {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("tool %q not listed", name)
	return listedTool{}
}

func TestToolsListPerRevision(t *testing.T) {
	for _, rev := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(rev, func(t *testing.T) {
			s := startSession(t, nil)
			params := ""
			if rev == "2026-07-28" {
				params = stateless // no handshake at all
			} else {
				initialize(s, rev)
			}
			ts, r := listTools(t, s, params)
			if len(ts) != len(testTools()) {
				t.Fatalf("listed %d tools, want %d", len(ts), len(testTools()))
			}
			echo := findTool(t, ts, "echo")
			if string(findTool(t, ts, "panic").InputSchema) != `{"type":"object"}` {
				t.Errorf("default inputSchema: %s", findTool(t, ts, "panic").InputSchema)
			}
			switch rev {
			case "2024-11-05":
				if echo.Title != nil || echo.OutputSchema != nil || echo.Annotations != nil {
					t.Errorf("2024-11-05 lists fields it lacks: %+v", echo)
				}
			case "2025-03-26":
				if echo.Title != nil || echo.OutputSchema != nil {
					t.Errorf("2025-03-26 lists title/outputSchema: %+v", echo)
				}
				if echo.Annotations["title"] != "Echo" || echo.Annotations["readOnlyHint"] != true || echo.Annotations["openWorldHint"] != false {
					t.Errorf("2025-03-26 annotations: %v", echo.Annotations)
				}
				if _, ok := echo.Annotations["destructiveHint"]; ok {
					t.Errorf("nil hint listed: %v", echo.Annotations)
				}
			default:
				if echo.Title == nil || *echo.Title != "Echo" || echo.OutputSchema == nil {
					t.Errorf("%s lacks title/outputSchema: %+v", rev, echo)
				}
				if _, ok := echo.Annotations["title"]; ok || echo.Annotations["readOnlyHint"] != true {
					t.Errorf("%s annotations: %v", rev, echo.Annotations)
				}
				if findTool(t, ts, "panic").Annotations != nil {
					t.Errorf("a tool without hints lists annotations")
				}
			}
			stateful := rev != "2026-07-28"
			if r.has(t, "resultType") == stateful || r.has(t, "ttlMs") == stateful || r.has(t, "_meta") == stateful {
				t.Errorf("resultType/ttlMs/_meta present=%v under %s: %s", !stateful, rev, r.raw)
			}
			if r.has(t, "nextCursor") {
				t.Errorf("one page holds every tool, yet nextCursor: %s", r.raw)
			}
		})
	}
}

func TestToolsListCursor(t *testing.T) {
	s := startSession(t, func(c *actor.Config) { c.ToolsPageSize = 3 })
	initialize(s, "2025-06-18")
	var names []string
	params := ""
	for page := 0; page < 10; page++ {
		ts, r := listTools(t, s, params)
		if len(ts) > 3 {
			t.Fatalf("page of %d tools", len(ts))
		}
		for _, tl := range ts {
			names = append(names, tl.Name)
		}
		if !r.has(t, "nextCursor") {
			break
		}
		var cursor string
		r.field(t, "nextCursor", &cursor)
		params = fmt.Sprintf(`"cursor":%q`, cursor)
	}
	var want []string
	for _, tl := range testTools() {
		want = append(want, tl.Name)
	}
	if !slices.Equal(names, want) {
		t.Fatalf("paged through %v, want %v", names, want)
	}
	r := s.call(`{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"cursor":"bm9wZQ"}}`)
	wantError(t, r, "9", -32602, "invalid cursor")
	r = s.call(`{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{"cursor":7}}`)
	wantError(t, r, "10", -32602, "cursor")

	// A page size above the tool count lists all at once, and a cursor of the
	// page before the last still works.
	s2 := startSession(t, nil)
	initialize(s2, "2025-06-18")
	_, r = listTools(t, s2, `"cursor":"ZWNobw"`) // after "echo"
	var ts []listedTool
	r.field(t, "tools", &ts)
	if len(ts) != len(testTools())-1 || ts[0].Name != "sleep" {
		t.Fatalf("listing after echo: %s", r.raw)
	}
}

func TestToolsCall(t *testing.T) {
	s := startSession(t, nil)
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
		s := startSession(t, nil)
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
	s := startSession(t, nil)
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
	if content[0].Text != `unknown argument "msec"` {
		t.Fatalf("refusal text %q", content[0].Text)
	}
}

func TestProtocolErrors(t *testing.T) {
	s := startSession(t, nil)
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
	s.noReply(200 * time.Millisecond)
	if err := s.closeAndWait(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(s.log.String(), actortest.Secret) {
		t.Fatalf("a secret reached the log:\n%s", s.log)
	}
}

func TestUnsupportedRevisionData(t *testing.T) {
	s := startSession(t, nil)
	r := s.call(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2030-01-01"}}}`)
	wantError(t, r, "1", -32022, "unsupported protocol version")
	var data struct {
		Supported []string
		Requested string
	}
	if err := json.Unmarshal(r.Error.Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.Requested != "2030-01-01" || !slices.Equal(data.Supported, actor.SupportedRevisions()) {
		t.Fatalf("data = %+v", data)
	}
}

func TestDiscoverAndPing(t *testing.T) {
	s := startSession(t, nil)
	r := s.call(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + stateless + `}}`)
	var versions []string
	r.field(t, "supportedVersions", &versions)
	if !slices.Equal(versions, []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}) {
		t.Fatalf("supportedVersions = %v", versions)
	}
	var rt, scope string
	var ttl int
	r.field(t, "resultType", &rt)
	r.field(t, "cacheScope", &scope)
	r.field(t, "ttlMs", &ttl)
	if rt != "complete" || scope == "" || !r.has(t, "capabilities") {
		t.Fatalf("discover: %s", r.raw)
	}
	// Without _meta too (a client probing).
	if r := s.call(`{"jsonrpc":"2.0","id":2,"method":"server/discover"}`); r.Error != nil {
		t.Fatalf("discover without _meta: %s", r.raw)
	}
	if r := s.call(`{"jsonrpc":"2.0","id":3,"method":"ping"}`); string(r.Result) != "{}" {
		t.Fatalf("ping: %s", r.raw)
	}
	if r := s.call(`{"jsonrpc":"2.0","id":4,"method":"ping","params":{` + stateless + `}}`); !strings.Contains(string(r.Result), `"resultType":"complete"`) {
		t.Fatalf("stateless ping: %s", r.raw)
	}
}

func TestPingWhileWorkersBusy(t *testing.T) {
	s := startSession(t, func(c *actor.Config) { c.Workers = 2 })
	initialize(s, "2025-11-25")
	for i := range 4 { // two running, two queued behind them
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"busy%d","method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}`, i))
	}
	time.Sleep(50 * time.Millisecond)
	for i := range 20 {
		start := time.Now()
		r := s.call(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i))
		if string(r.ID) != fmt.Sprint(i) || r.Error != nil {
			t.Fatalf("ping %d: %s", i, r.raw)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("ping %d took %v behind busy workers", i, d)
		}
	}
	// Cancelled, the sleeps get no reply; EOF then ends it cleanly.
	for i := range 4 {
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"busy%d","reason":"test"}}`, i))
	}
	s.noReply(300 * time.Millisecond)
	if r := s.call(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"sleep","arguments":{"ms":1}}}`); r.Error != nil {
		t.Fatalf("a call after the cancels: %s", r.raw)
	}
	if err := s.closeAndWait(); err != nil {
		t.Fatal(err)
	}
}

func TestCancelledGetsNoReply(t *testing.T) {
	s := startSession(t, nil)
	initialize(s, "2025-11-25")
	// A tool that ignores its context and answers after the cancel: still no reply.
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":500,"ignoreCancel":true}}}`)
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	// Cancelling by the same number written differently still finds it.
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}`)
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2.0}}`)
	s.noReply(800 * time.Millisecond)
	// The id is free again once the cancelled call ended.
	if r := s.call(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`); r.Error != nil {
		t.Fatalf("reusing a finished id: %s", r.raw)
	}
}

func TestDuplicateInFlightID(t *testing.T) {
	s := startSession(t, nil)
	initialize(s, "2025-11-25")
	s.send(`{"jsonrpc":"2.0","id":"d","method":"tools/call","params":{"name":"sleep","arguments":{"ms":300}}}`)
	r := s.call(`{"jsonrpc":"2.0","id":"d","method":"tools/call","params":{"name":"echo"}}`)
	wantError(t, r, `"d"`, -32600, "already in flight")
	r = s.recvMsg()
	if string(r.ID) != `"d"` || r.Error != nil {
		t.Fatalf("the first call's reply: %s", r.raw)
	}
}

func TestBatch(t *testing.T) {
	s := startSession(t, nil)
	initialize(s, "2025-03-26")
	s.send(`[` +
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":30}}},` +
		`{"jsonrpc":"2.0","method":"notifications/initialized"},` +
		`{"jsonrpc":"2.0","id":2,"method":"ping"},` +
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"n":3}}},` +
		`{"jsonrpc":"2.0","id":4,"method":"nope"},` +
		`5,` +
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}},` +
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6}}` +
		`]`)
	line := s.recv()
	var replies []reply
	if err := json.Unmarshal(line, &replies); err != nil {
		t.Fatalf("batch reply is not an array: %s", line)
	}
	got := map[string]int64{}
	for _, r := range replies {
		got[string(r.ID)] = r.code()
	}
	want := map[string]int64{"1": 0, "2": 0, "3": 0, "4": -32601, "null": -32600}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("batch replies %v, want %v (cancelled 6 has none): %s", got, want, line)
	}
	// Only notifications: no reply at all.
	s.send(`[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":77}}]`)
	// Every request cancelled: no reply either.
	s.send(`[{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1"}}]`)
	s.noReply(300 * time.Millisecond)
	// A batch of one request is still an array.
	s.send(`[{"jsonrpc":"2.0","id":8,"method":"ping"}]`)
	if line := s.recv(); string(line) != `[{"jsonrpc":"2.0","id":8,"result":{}}]`+"\n" {
		t.Fatalf("batch of one: %s", line)
	}
}

func TestProgress(t *testing.T) {
	for _, rev := range []string{"2024-11-05", "2025-06-18"} {
		s := startSession(t, nil)
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
		s.noReply(50 * time.Millisecond)
	}
}

func TestOversizeLine(t *testing.T) {
	s := startSession(t, func(c *actor.Config) { c.MaxLineBytes = 1024 })
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

func TestEOFCancelsInFlight(t *testing.T) {
	s := startSession(t, nil)
	initialize(s, "2025-11-25")
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}`)
	s.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if r := s.recvMsg(); string(r.ID) != "2" {
		t.Fatalf("ping: %s", r.raw)
	}
	start := time.Now()
	if err := s.closeAndWait(); err != nil {
		t.Fatalf("Serve after EOF = %v, want nil", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("shutdown took %v", d)
	}
	for line := range s.lines {
		t.Fatalf("reply after EOF to a cancelled call: %s", line)
	}
	if !strings.Contains(s.log.String(), `"outcome":"cancelled"`) {
		t.Fatalf("no cancelled outcome logged:\n%s", s.log)
	}
}

func TestLastLineWithoutNewline(t *testing.T) {
	s := startSession(t, nil)
	if _, err := io.WriteString(s.in, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); err != nil {
		t.Fatal(err)
	}
	if err := s.closeAndWait(); err != nil {
		t.Fatal(err)
	}
	if r := s.recvMsg(); string(r.ID) != "1" {
		t.Fatalf("reply: %s", r.raw)
	}
}

func TestContextEndStopsServe(t *testing.T) {
	s := startSession(t, nil)
	initialize(s, "2025-11-25")
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}`)
	time.Sleep(20 * time.Millisecond)
	s.cancel() // as SIGTERM does through signal.NotifyContext
	select {
	case err := <-s.errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Serve = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return when its context ended")
	}
	for line := range s.lines {
		t.Fatalf("reply to a call cancelled by shutdown: %s", line)
	}
}

// failingWriter fails every write after the first n bytes, like a pipe whose
// reader went away.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestBrokenReplyStream(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close()
	errc := make(chan error, 1)
	go func() {
		errc <- actor.Serve(context.Background(), actor.Config{In: inR, Out: failingWriter{}, Tools: toolsRegistry()})
	}()
	go func() {
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`+"\n")
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}`+"\n")
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
	}()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "broken pipe") {
			t.Fatalf("Serve = %v, want the write error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not stop on a broken reply stream")
	}
}
