package actor_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/actor"
)

// TestEOFAnswersWhatWasRead closes stdin right after the requests: each one already read is
// answered — the reader's and the pool's — before Serve returns.
func TestEOFAnswersWhatWasRead(t *testing.T) {
	s := startClient(t, nil)
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":200}}}`)
	s.send(`[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}},{"jsonrpc":"2.0","id":4,"method":"ping"}]`)
	if err := s.closeAndWait(); err != nil {
		t.Fatalf("Serve after EOF = %v, want nil", err)
	}
	got := map[string]bool{}
	for line := range s.lines {
		for _, r := range decodeLine(t, line) {
			if r.Error != nil {
				t.Errorf("error reply: %s", r.raw)
			}
			got[string(r.ID)] = true
		}
	}
	for _, id := range []string{"0", "1", "2", "3", "4"} {
		if !got[id] {
			t.Errorf("request %s, read before EOF, got no reply (replies: %v)", id, got)
		}
	}
}

// A call still running when the grace after EOF is over is cancelled, with stdin's end as its cause,
// and gets no reply.
func TestEOFCancelsInFlight(t *testing.T) {
	s := startClient(t, nil)
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
	want := `"cause":"actor: stdin closed ` + actor.DefaultEOFGrace.String() + ` ago, and the call was still running"`
	if !strings.Contains(s.log.String(), want) {
		t.Fatalf("the log does not say %s:\n%s", want, s.log)
	}
}

// A tool that is not read-only (runTasks) is cancelled as soon as stdin ends, whatever the grace:
// the one running, and the one still queued, which never starts. Read-only work goes on.
func TestEOFCancelsToolsThatWrite(t *testing.T) {
	g := newGate()
	defer g.open()
	s := startClient(t, func(c *actor.Config) { g.serve(c); c.Workers = 2; c.EOFGrace = time.Hour })
	initialize(s, "2025-11-25")
	// run has no readOnlyHint: it may write.
	s.send(`{"jsonrpc":"2.0","id":"w1","method":"tools/call","params":{"name":"run","arguments":{"ms":3600000},"_meta":{"progressToken":"t"}}}`)
	if r := s.recvMsg(); r.Method != "notifications/progress" {
		t.Fatalf("want w1's first progress, got %s", r.raw)
	}
	s.send(`{"jsonrpc":"2.0","id":"g","method":"tools/call","params":{"name":"gate"}}`)
	s.await(`"g"`, "running")
	s.send(`{"jsonrpc":"2.0","id":"w2","method":"tools/call","params":{"name":"run","arguments":{"ms":3600000}}}`)
	s.await(`"w2"`, "queued")
	_ = s.in.Close()
	s.await(`"w1"`, "cancelled")
	g.open()
	if err := s.closeAndWait(); err != nil {
		t.Fatalf("Serve after EOF = %v, want nil", err)
	}
	var ids []string
	for line := range s.lines {
		for _, r := range decodeLine(t, line) {
			ids = append(ids, string(r.ID))
		}
	}
	if !slices.Equal(ids, []string{`"g"`}) {
		t.Fatalf("replies after EOF to %v, want only the read-only gate's", ids)
	}
	for _, id := range []string{`"w1"`, `"w2"`} {
		if h := s.calls.history(id); !slices.Contains(h, "cancelled") || slices.Contains(h, "answered") {
			t.Fatalf("call %s went %v: not cancelled", id, h)
		}
	}
	if !strings.Contains(s.log.String(), `"cause":"actor: stdin closed"`) {
		t.Fatalf("stdin's end is not the logged cause:\n%s", s.log)
	}
}

// A signal during the grace ends it: what runs is cancelled at once, and Serve returns ctx.Err().
func TestSignalDuringEOFGrace(t *testing.T) {
	s := startClient(t, func(c *actor.Config) { c.EOFGrace = time.Hour })
	initialize(s, "2025-11-25")
	s.send(`{"jsonrpc":"2.0","id":"sleep","method":"tools/call","params":{"name":"sleep","arguments":{"ms":3600000}}}`)
	s.send(`{"jsonrpc":"2.0","id":"run","method":"tools/call","params":{"name":"run","arguments":{"ms":3600000},"_meta":{"progressToken":"t"}}}`)
	if r := s.recvMsg(); r.Method != "notifications/progress" {
		t.Fatalf("want run's progress, got %s", r.raw)
	}
	s.await(`"sleep"`, "running")
	_ = s.in.Close()
	s.await(`"run"`, "cancelled") // stdin's end was read: the grace is running
	s.cancel()                    // as SIGTERM does through signal.NotifyContext
	select {
	case err := <-s.errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Serve = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return when its context ended during the grace")
	}
	for line := range s.lines {
		t.Fatalf("reply to a call cancelled by the signal: %s", line)
	}
	s.wantHistory(`"sleep"`, "queued", "running", "cancelled", "done")
	if !strings.Contains(s.log.String(), `"id":"sleep","cause":"context canceled"`) {
		t.Fatalf("the signal is not the sleep's logged cause:\n%s", s.log)
	}
}

// A negative grace cancels every call at once on EOF, as a signal does.
func TestEOFWithoutGrace(t *testing.T) {
	s := startClient(t, func(c *actor.Config) { c.EOFGrace = -1 })
	initialize(s, "2025-11-25")
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}`)
	s.await("1", "running")
	if err := s.closeAndWait(); err != nil {
		t.Fatalf("Serve after EOF = %v, want nil", err)
	}
	for line := range s.lines {
		t.Fatalf("reply after EOF to a cancelled call: %s", line)
	}
	s.wantHistory("1", "queued", "running", "cancelled", "done")
}

// decodeLine decodes one line of the reply stream: a message, or a batch's array of them.
func decodeLine(t *testing.T, line []byte) []reply {
	t.Helper()
	var rs []reply
	if len(line) > 0 && line[0] == '[' {
		if err := json.Unmarshal(line, &rs); err != nil {
			t.Fatalf("batch reply %s: %v", line, err)
		}
		for i := range rs {
			rs[i].raw = line
		}
		return rs
	}
	var r reply
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatalf("reply %s: %v", line, err)
	}
	r.raw = line
	return []reply{r}
}
