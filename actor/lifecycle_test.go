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
)

func TestPingWhileWorkersBusy(t *testing.T) {
	s := startClient(t, func(c *actor.Config) { c.Workers = 2 })
	initialize(s, "2025-11-25")
	for i := range 4 { // two running, two queued behind them
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"busy%d","method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}`, i))
	}
	s.await(`"busy0"`, "running")
	s.await(`"busy1"`, "running")
	s.await(`"busy3"`, "queued")
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
	for i := range 4 {
		if h := s.await(fmt.Sprintf(`"busy%d"`, i), "done"); slices.Contains(h, "answered") {
			t.Fatalf("busy%d was answered: %v", i, h)
		}
	}
	s.barrier()
	if r := s.call(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"sleep","arguments":{"ms":1}}}`); r.Error != nil {
		t.Fatalf("a call after the cancels: %s", r.raw)
	}
	if err := s.closeAndWait(); err != nil {
		t.Fatal(err)
	}
}

// A call cancelled while it runs, or while it waits for a worker, gets no reply, even when its tool
// ignores the cancel and answers anyway; its id stays taken until its handler has returned.
func TestCancelledGetsNoReply(t *testing.T) {
	g := newGate()
	defer g.open()
	s := startClient(t, func(c *actor.Config) { g.serve(c); c.Workers = 1 })
	initialize(s, "2025-11-25")
	// A tool deaf to its context, running when the cancel comes: it answers, and is not answered.
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"gate"}}`)
	s.await("1", "running")
	// Queued behind it: cancelled before it ever runs.
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`)
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	s.await("1", "cancelled")
	// Cancelling by the same number written differently still finds it.
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2.0}}`)
	s.await("2", "cancelled")
	wantError(t, s.call(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`), "1", -32600, "already in flight")
	g.open()
	s.await("2", "done")
	s.wantHistory("1", "queued", "running", "cancelled", "done")
	s.wantHistory("2", "queued", "cancelled", "done")
	s.barrier()
	// The id is free again once the cancelled call ended.
	if r := s.call(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`); r.Error != nil {
		t.Fatalf("reusing a finished id: %s", r.raw)
	}
	if log := s.log.String(); !strings.Contains(log, `"cause":"actor: cancelled by the client (notifications/cancelled)"`) {
		t.Fatalf("the cancel's cause is not logged:\n%s", log)
	}
}

func TestDuplicateInFlightID(t *testing.T) {
	g := newGate()
	defer g.open()
	s := startClient(t, g.serve)
	initialize(s, "2025-11-25")
	s.send(`{"jsonrpc":"2.0","id":"d","method":"tools/call","params":{"name":"gate"}}`)
	r := s.call(`{"jsonrpc":"2.0","id":"d","method":"tools/call","params":{"name":"echo"}}`)
	wantError(t, r, `"d"`, -32600, "already in flight")
	g.open()
	r = s.recvMsg()
	if string(r.ID) != `"d"` || r.Error != nil {
		t.Fatalf("the first call's reply: %s", r.raw)
	}
}

func TestBatch(t *testing.T) {
	s := startClient(t, nil)
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
	s.await(`"c1"`, "done")
	s.barrier()
	// A batch of one request is still an array.
	s.send(`[{"jsonrpc":"2.0","id":8,"method":"ping"}]`)
	if line := s.recv(); string(line) != `[{"jsonrpc":"2.0","id":8,"result":{}}]`+"\n" {
		t.Fatalf("batch of one: %s", line)
	}
}

func TestLastLineWithoutNewline(t *testing.T) {
	s := startClient(t, nil)
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
	s := startClient(t, nil)
	initialize(s, "2025-11-25")
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}`)
	s.await("1", "running")
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
	s.wantHistory("1", "queued", "running", "cancelled", "done")
	if !strings.Contains(s.log.String(), `"cause":"context canceled"`) {
		t.Fatalf("the cancel's cause is not logged:\n%s", s.log)
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
