package actor_test

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vzn/vx/actor"
	"github.com/vzn/vx/actor/tool"
)

// initialize, server/discover and ping are answered without building a tool: a Lazy registry is
// built on the first tools/list, once. AfterFirstFrame runs once, after the first request was
// answered.
func TestHandshakeBuildsNoTool(t *testing.T) {
	var built, after atomic.Int32
	s := startClient(t, func(cfg *actor.Config) {
		cfg.Tools = tool.Lazy(func() []tool.Tool {
			built.Add(1)
			return testTools()
		})
		cfg.AfterFirstFrame = func() { after.Add(1) }
	})
	if after.Load() != 0 {
		t.Fatal("AfterFirstFrame ran before any frame")
	}
	initialize(s, "2025-06-18")
	if r := s.call(`{"jsonrpc":"2.0","id":1,"method":"ping"}`); r.Error != nil {
		t.Fatalf("ping: %s", r.raw)
	}
	if r := s.call(`{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`); r.Error != nil {
		t.Fatalf("server/discover: %s", r.raw)
	}
	if n := built.Load(); n != 0 {
		t.Fatalf("the handshake built the tools %d times", n)
	}
	if n := after.Load(); n != 1 {
		t.Fatalf("AfterFirstFrame ran %d times, want once", n)
	}
	for id := range 2 {
		if r := s.call(`{"jsonrpc":"2.0","id":"l` + string(rune('0'+id)) + `","method":"tools/list"}`); !strings.Contains(string(r.raw), `"echo"`) {
			t.Fatalf("tools/list: %s", r.raw)
		}
	}
	if n := built.Load(); n != 1 {
		t.Fatalf("two tools/list built the tools %d times, want once", n)
	}
}
