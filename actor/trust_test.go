package actor_test

import (
	"encoding/json"
	"fmt"
	"testing"
)

// An id that is not valid UTF-8 cannot come back as it was sent inside a valid JSON reply: the
// message is refused with -32600 and id null, whatever its method.
func TestInvalidUTF8IDRefused(t *testing.T) {
	s := startClient(t, nil)
	initialize(s, "2025-11-25")
	for _, line := range []string{
		"{\"jsonrpc\":\"2.0\",\"id\":\"a\xffb\",\"method\":\"ping\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xc3\",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}",
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xed\xa0\x80\",\"method\":\"tools/list\"}", // a surrogate, UTF-8 encoded
	} {
		r := s.call(line)
		wantError(t, r, "null", -32600, "UTF-8")
	}
	// In a batch, the element alone is refused.
	s.send("[{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}]")
	if line := string(s.recv()); line != `[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: \"id\" is not valid UTF-8"}},{"jsonrpc":"2.0","id":2,"result":{}}]`+"\n" {
		t.Fatalf("batch: %s", line)
	}
}

// Ids are told apart as sent: two string ids that decode to the same replacement character (lone
// surrogates, escaped) are two requests, each answered with its own id, byte for byte.
func TestIDsEchoedByteExact(t *testing.T) {
	s := startClient(t, nil)
	initialize(s, "2025-11-25")
	ids := []string{`"\ud800"`, `"\udbff"`, `"\uFFFD"`, `"é"`, `"\u00e9x"`}
	for _, id := range ids {
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":100}}}`, id))
	}
	got := map[string]bool{}
	for range ids {
		r := s.recvMsg()
		if r.Error != nil {
			t.Fatalf("reply %s", r.raw)
		}
		got[string(r.ID)] = true
	}
	for _, id := range ids {
		if !got[id] {
			t.Errorf("no reply with id %s exactly (got %v)", id, got)
		}
	}
}

// A line of NUL bytes is not a blank line between frames: it is not JSON, and gets -32700.
func TestNULLineIsAParseError(t *testing.T) {
	s := startClient(t, nil)
	for _, line := range []string{"\x00\x00\x00", "\x00", " \x00 ", "\x00{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"} {
		r := s.call(line)
		wantError(t, r, "null", -32700, "parse error")
	}
	// Blank lines stay blank.
	s.send(" \t\r")
	s.barrier()
}

// On a connection that negotiates a handshake revision, tools/list and tools/call are refused until
// initialize was answered; ping and server/discover are not. A request of the stateless revision,
// which names it in params._meta, needs no handshake.
func TestToolsRefusedBeforeInitialize(t *testing.T) {
	s := startClient(t, nil)
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2025-06-18"}}}`,
	} {
		wantError(t, s.call(line), "1", -32600, "initialize")
	}
	if r := s.call(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); r.Error != nil {
		t.Fatalf("ping before initialize: %s", r.raw)
	}
	if r := s.call(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + stateless + `}}`); r.Error != nil {
		t.Fatalf("stateless tools/list: %s", r.raw)
	}
	if r := s.call(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo",` + stateless + `}}`); r.Error != nil {
		t.Fatalf("stateless tools/call: %s", r.raw)
	}
	// A failed initialize is no handshake.
	if r := s.call(`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":5}}`); r.Error == nil {
		t.Fatalf("initialize with a number: %s", r.raw)
	}
	wantError(t, s.call(`{"jsonrpc":"2.0","id":6,"method":"tools/list"}`), "6", -32600, "initialize")
	// Once initialize is answered, the tools are served — in the same batch too.
	s.send(`[{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-06-18"}},{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo"}}]`)
	var replies []reply
	line := s.recv()
	if err := json.Unmarshal(line, &replies); err != nil || len(replies) != 2 || replies[0].Error != nil || replies[1].Error != nil {
		t.Fatalf("initialize and a call in one batch: %s", line)
	}
	if r := s.call(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`); r.Error != nil {
		t.Fatalf("tools/list after initialize: %s", r.raw)
	}
}
