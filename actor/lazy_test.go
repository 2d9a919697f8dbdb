package actor_test

import (
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vzn/vx/actor"
	"github.com/vzn/vx/actor/tool"
)

// initialize, server/discover and ping are answered without building a tool: a Lazy registry is
// built on the first tools/list, once. AfterFirstFrame runs once, after the first reply was
// written (Out is a pipe: a write returns once the client has read it) and the client's next frame
// came.
func TestHandshakeBuildsNoTool(t *testing.T) {
	var built, after atomic.Int32
	var written atomic.Int64
	early := make(chan bool, 1)
	s := startClient(t, func(cfg *actor.Config) {
		cfg.Tools = tool.Lazy(func() []tool.Tool {
			built.Add(1)
			return testTools()
		})
		cfg.Out = countingWriter{cfg.Out, &written}
		cfg.AfterFirstFrame = func() {
			after.Add(1)
			early <- written.Load() == 0
		}
	})
	if after.Load() != 0 {
		t.Fatal("AfterFirstFrame ran before any frame")
	}
	if r := s.call(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`); r.Error != nil {
		t.Fatalf("initialize: %s", r.raw)
	}
	if after.Load() != 0 {
		t.Fatal("AfterFirstFrame ran before the client sent its next frame")
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
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
	if <-early {
		t.Error("AfterFirstFrame ran before the initialize reply was written")
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

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// A first frame the reader does not answer itself (a notification) runs AfterFirstFrame once it
// is handled, without waiting for a reply that may never come.
func TestAfterFirstFrameWithoutAReply(t *testing.T) {
	ran := make(chan struct{})
	s := startClient(t, func(cfg *actor.Config) {
		cfg.AfterFirstFrame = func() { close(ran) }
	})
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	<-ran
}
