package actor_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vzn/vx/actor"
)

const stateless = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func initialize(s *client, rev string) reply {
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
		s := startClient(t, nil)
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

func listTools(t *testing.T, s *client, params string) ([]listedTool, reply) {
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
			s := startClient(t, nil)
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
				if findTool(t, ts, "run").Annotations != nil {
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
	s := startClient(t, func(c *actor.Config) { c.ToolsPageSize = 3 })
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
	s2 := startClient(t, nil)
	initialize(s2, "2025-06-18")
	_, r = listTools(t, s2, `"cursor":"ZWNobw"`) // after "echo"
	var ts []listedTool
	r.field(t, "tools", &ts)
	if len(ts) != len(testTools())-1 || ts[0].Name != "sleep" {
		t.Fatalf("listing after echo: %s", r.raw)
	}
}

func TestUnsupportedRevisionData(t *testing.T) {
	s := startClient(t, nil)
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
	s := startClient(t, nil)
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
