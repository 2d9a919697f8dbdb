package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vzn/vx/internal/testkit"
)

// rawClient speaks newline-delimited JSON-RPC to a real `vx mcp` child, as any client would, with
// nothing between: it sends requests, waits for their responses by id, keeps every notification,
// and answers the server's own requests (elicitation/create) with answer.
type rawClient struct {
	t      *testing.T
	stdin  *os.File
	stderr *testkit.SyncBuffer
	done   chan error // the child's exit

	mu       sync.Mutex
	next     int
	waiting  map[string]chan json.RawMessage
	notes    []json.RawMessage
	asked    []json.RawMessage // the server's requests, as sent
	noteSeen chan struct{}
	answer   func(method string, params json.RawMessage) any
}

// startRawClient starts `vx mcp` in dir, env added; answer (nil: none) answers the server's
// requests. The child's stdin is closed when the test ends, and the child waited for.
func startRawClient(t *testing.T, dir string, answer func(method string, params json.RawMessage) any, env ...string) *rawClient {
	t.Helper()
	cmd := vxCommand(t, dir, "mcp")
	cmd.Env = append(cmd.Env, env...)
	c := &rawClient{t: t, stderr: &testkit.SyncBuffer{}, done: make(chan error, 1), waiting: map[string]chan json.RawMessage{},
		noteSeen: make(chan struct{}, 1), answer: answer}
	cmd.Stderr = c.stderr
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout, c.stdin = inR, outW, inW
	if err := cmd.Start(); err != nil {
		t.Fatalf("start vx mcp: %v", err)
	}
	inR.Close()
	outW.Close()
	go func() { c.readLoop(outR) }()
	go func() { c.done <- cmd.Wait() }()
	t.Cleanup(func() {
		c.stdin.Close()
		select {
		case err := <-c.done:
			if err != nil {
				t.Errorf("vx mcp exited: %v", err)
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("vx mcp did not exit after EOF")
		}
		if t.Failed() {
			t.Logf("vx mcp stderr:\n%s", c.stderr)
		}
	})
	return c
}

func (c *rawClient) readLoop(r *os.File) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := append(json.RawMessage(nil), sc.Bytes()...)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch {
		case m.Method != "" && m.ID != nil: // the server asks
			c.mu.Lock()
			c.asked = append(c.asked, line)
			c.mu.Unlock()
			var result any = map[string]any{"action": "cancel"}
			if c.answer != nil {
				result = c.answer(m.Method, m.Params)
			}
			c.write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
		case m.Method != "":
			c.mu.Lock()
			c.notes = append(c.notes, line)
			c.mu.Unlock()
			select {
			case c.noteSeen <- struct{}{}:
			default:
			}
		default:
			c.mu.Lock()
			ch := c.waiting[string(m.ID)]
			delete(c.waiting, string(m.ID))
			c.mu.Unlock()
			if ch != nil {
				ch <- line
			}
		}
	}
}

func (c *rawClient) write(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.stdin.Write(append(data, '\n')); err != nil {
		c.t.Errorf("write to vx mcp: %v", err)
	}
}

// rawReply is a response: its result, or its error.
type rawReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// send sends the request method with params and returns its channel of response.
func (c *rawClient) send(method string, params any) chan json.RawMessage {
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan json.RawMessage, 1)
	c.waiting[fmt.Sprint(id)] = ch
	c.mu.Unlock()
	c.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return ch
}

// request sends a request and waits for its response.
func (c *rawClient) request(method string, params any) rawReply {
	c.t.Helper()
	return c.wait(method, c.send(method, params))
}

func (c *rawClient) wait(method string, ch chan json.RawMessage) rawReply {
	c.t.Helper()
	select {
	case line := <-ch:
		var r rawReply
		if err := json.Unmarshal(line, &r); err != nil {
			c.t.Fatalf("%s: %s: %v", method, line, err)
		}
		return r
	case err := <-c.done:
		c.t.Fatalf("%s: vx mcp exited: %v\nstderr:\n%s", method, err, c.stderr)
	case <-time.After(60 * time.Second):
		c.t.Fatalf("%s: no response in 60s\nstderr:\n%s", method, c.stderr)
	}
	return rawReply{}
}

// result sends a request and decodes its result into v, failing on an error.
func (c *rawClient) result(method string, params any, v any) {
	c.t.Helper()
	r := c.request(method, params)
	if r.Error != nil {
		c.t.Fatalf("%s: error %d %s", method, r.Error.Code, r.Error.Message)
	}
	if err := json.Unmarshal(r.Result, v); err != nil {
		c.t.Fatalf("%s: %s: %v", method, r.Result, err)
	}
}

// initialize makes the handshake under rev with the client capabilities caps.
func (c *rawClient) initialize(rev string, caps map[string]any) json.RawMessage {
	c.t.Helper()
	var res json.RawMessage
	c.result("initialize", map[string]any{"protocolVersion": rev, "capabilities": caps,
		"clientInfo": map[string]any{"name": "raw-test", "version": "1"}}, &res)
	c.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return res
}

// notifications answers the notifications of method received so far.
func (c *rawClient) notifications(method string) []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []json.RawMessage
	for _, n := range c.notes {
		if strings.Contains(string(n), `"method":"`+method+`"`) {
			out = append(out, n)
		}
	}
	return out
}

// waitNotification waits until a notification of method holding each of want has come.
func (c *rawClient) waitNotification(method string, want ...string) json.RawMessage {
	c.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
	next:
		for _, n := range c.notifications(method) {
			for _, w := range want {
				if !strings.Contains(string(n), w) {
					continue next
				}
			}
			return n
		}
		select {
		case <-c.noteSeen:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			c.t.Fatalf("no %s notification holding %q; got %s", method, want, c.notifications(method))
		}
	}
}

// statelessMeta is the _meta of a stateless (2026-07-28) request whose client declares caps.
func statelessMeta(caps map[string]any) map[string]any {
	return map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw-test", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": caps}
}

// questions answers the server's requests received so far.
func (c *rawClient) questions() []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]json.RawMessage(nil), c.asked...)
}
