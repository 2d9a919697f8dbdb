package actor_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/vzn/vx/actor"
)

// A stateless request whose _meta names a revision the server does not speak — older, between two
// it speaks, or newer — is refused with -32022 and the supported list, whatever its method; an
// initialize asking for such a revision is still offered the newest.
func TestUnknownRevisionIsRefused(t *testing.T) {
	s := startClient(t, nil)
	for _, rev := range []string{"1900-01-01", "2026-06-30", "2099-01-01"} {
		for _, method := range []string{"ping", "tools/list", "tools/call"} {
			r := s.call(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":%q}}}`, method, rev))
			if r.code() != -32022 || !strings.Contains(string(r.Error.Data), `"supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]`) ||
				!strings.Contains(string(r.Error.Data), `"requested":"`+rev+`"`) {
				t.Errorf("%s under %s = %s", method, rev, r.raw)
			}
		}
	}
	r := s.call(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2026-06-30","capabilities":{},"clientInfo":{"name":"t","version":"1"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-06-30"}}}`)
	var got string
	r.field(t, "protocolVersion", &got)
	if got != actor.Rev20251125 {
		t.Errorf("initialize asking 2026-06-30 = %s", r.raw)
	}
	if err := s.closeAndWait(); err != nil {
		t.Fatal(err)
	}
}

// The server's instructions go to every host: in initialize's result and in server/discover's.
func TestInstructionsAreSent(t *testing.T) {
	const text = "Prefer vx to a shell."
	s := startClient(t, func(c *actor.Config) { c.Instructions = text })
	var got string
	initialize(s, "2025-06-18").field(t, "instructions", &got)
	if got != text {
		t.Errorf("initialize instructions = %q", got)
	}
	s.call(`{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{`+stateless+`}}`).field(t, "instructions", &got)
	if got != text {
		t.Errorf("server/discover instructions = %q", got)
	}
	if err := s.closeAndWait(); err != nil {
		t.Fatal(err)
	}
}

// Tools list the hints hosts that defer tools read in _meta, under every revision; execution only
// to a client that declared tasks, on a server that runs them.
func TestToolsListTheirHints(t *testing.T) {
	for _, tc := range []struct {
		rev       string
		caps      string
		tasks     bool
		execution bool
	}{
		{"2025-11-25", `{"tasks":{}}`, true, true},
		{"2025-11-25", `{}`, true, false},
		{"2025-11-25", `{"tasks":{}}`, false, false},
		{"2025-06-18", `{"tasks":{}}`, true, false},
	} {
		s := startClient(t, func(c *actor.Config) { c.Tasks = tc.tasks })
		s.call(fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"t","version":"1"}}}`, tc.rev, tc.caps))
		var tools []map[string]json.RawMessage
		s.call(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`).field(t, "tools", &tools)
		for _, tl := range tools {
			var name string
			_ = json.Unmarshal(tl["name"], &name)
			if name != "run" {
				continue
			}
			if got := string(tl["_meta"]); got != `{"anthropic/alwaysLoad":true}` {
				t.Errorf("%+v: run's _meta = %s", tc, got)
			}
			if got := string(tl["execution"]); (got == `{"taskSupport":"optional"}`) != tc.execution {
				t.Errorf("%+v: run's execution = %s", tc, got)
			}
		}
		if err := s.closeAndWait(); err != nil {
			t.Fatal(err)
		}
	}
}
