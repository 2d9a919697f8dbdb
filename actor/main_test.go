package actor_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/vzn/vx/actor"
	"github.com/vzn/vx/actor/actortest"
	"github.com/vzn/vx/actor/tool"
)

func TestMain(m *testing.M) {
	actortest.MaybeServe(printerTool())
	// The scripts of script_test.go run the test server as the command mcpserver.
	testscript.Main(leakChecked{m}, map[string]func(){"mcpserver": func() { os.Exit(actortest.Serve(printerTool())) }})
}

// leakChecked runs the tests, then fails the package if any goroutine outlived them.
type leakChecked struct{ m *testing.M }

func (l leakChecked) Run() int {
	code := l.m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goroutines outlived the tests: %v\n", err)
			return 1
		}
	}
	return code
}

// client is a test's end of a server run in process over io.Pipes: it writes the requests
// and reads the replies.
type client struct {
	t      *testing.T
	in     *io.PipeWriter
	lines  chan []byte
	errc   chan error
	cancel context.CancelFunc
	log    *actortest.SyncBuffer
	calls  *callLog
}

// callLog records every transition of the server's calls, for tests to wait on.
type callLog struct {
	mu      sync.Mutex
	seen    []actor.CallEvent
	changed chan struct{} // closed and replaced at every event
}

func (l *callLog) record(e actor.CallEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, e)
	close(l.changed)
	l.changed = make(chan struct{})
}

// history returns the phases the call with id (as sent) went through, in order.
func (l *callLog) history(id string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var h []string
	for _, e := range l.seen {
		if e.ID == id {
			h = append(h, e.Phase)
		}
	}
	return h
}

// await blocks until the call with id has entered phase and returns its history so far.
func (s *client) await(id, phase string) []string {
	s.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		s.calls.mu.Lock()
		changed := s.calls.changed
		s.calls.mu.Unlock()
		h := s.calls.history(id)
		if slices.Contains(h, phase) {
			return h
		}
		select {
		case <-changed:
		case <-timeout:
			s.t.Fatalf("call %s did not become %s within 10s (history %v)", id, phase, h)
		}
	}
}

// wantHistory checks the phases the call with id went through.
func (s *client) wantHistory(id string, want ...string) {
	s.t.Helper()
	if got := s.calls.history(id); !slices.Equal(got, want) {
		s.t.Fatalf("call %s went %v, want %v", id, got, want)
	}
}

// startClient serves the test tools in process; edit adjusts the config.
func startClient(t *testing.T, edit func(*actor.Config)) *client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	s := &client{t: t, in: inW, lines: make(chan []byte, 4096), errc: make(chan error, 1), cancel: cancel, log: &actortest.SyncBuffer{},
		calls: &callLog{changed: make(chan struct{})}}
	cfg := actor.Config{
		In: inR, Out: outW,
		Logger:        zerolog.New(s.log).Level(zerolog.DebugLevel),
		Tools:         tool.NewRegistry(testTools()...),
		Workers:       4,
		Mask:          actortest.Mask,
		ServerName:    "vx-test",
		ServerVersion: "1.2.3",
	}
	actor.ObserveCalls(&cfg, s.calls.record)
	if edit != nil {
		edit(&cfg)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		err := actor.Serve(ctx, cfg)
		_ = outW.Close()
		_ = inR.Close()
		s.errc <- err
	}()
	go func() {
		defer wg.Done()
		defer close(s.lines)
		r := bufio.NewReader(outR)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				s.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		_ = inW.Close()
		wg.Wait()
	})
	return s
}

func (s *client) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("send: %v", err)
	}
}

func (s *client) recv() []byte {
	s.t.Helper()
	select {
	case line, ok := <-s.lines:
		if !ok {
			s.t.Fatal("the server closed its output")
		}
		return line
	case <-time.After(10 * time.Second):
		s.t.Fatal("no reply within 10s")
	}
	return nil
}

// recvMsg returns the next line decoded as one JSON-RPC message.
func (s *client) recvMsg() reply {
	s.t.Helper()
	line := s.recv()
	var r reply
	if err := json.Unmarshal(line, &r); err != nil {
		s.t.Fatalf("reply %s is not a JSON object: %v", line, err)
	}
	r.raw = line
	return r
}

// barrier pings the server and fails the test unless the ping's reply is the next line: whatever
// the reader handled before it (a notification, a response, a blank line, a batch of those) and
// every call already finished left nothing on the reply stream.
func (s *client) barrier() {
	s.t.Helper()
	if r := s.call(`{"jsonrpc":"2.0","id":"barrier","method":"ping"}`); string(r.ID) != `"barrier"` {
		s.t.Fatalf("unexpected line before the barrier's reply: %s", r.raw)
	}
}

// call sends a request and returns its reply (the next line).
func (s *client) call(line string) reply {
	s.t.Helper()
	s.send(line)
	return s.recvMsg()
}

// closeAndWait closes stdin and returns Serve's result.
func (s *client) closeAndWait() error {
	s.t.Helper()
	_ = s.in.Close()
	select {
	case err := <-s.errc:
		return err
	case <-time.After(10 * time.Second):
		s.t.Fatal("Serve did not return after EOF")
	}
	return nil
}

type reply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	raw []byte
}

func (r reply) code() int64 {
	if r.Error == nil {
		return 0
	}
	return r.Error.Code
}

// field decodes the result's member name into v.
func (r reply) field(t *testing.T, name string, v any) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r.Result, &m); err != nil {
		t.Fatalf("result of %s: %v", r.raw, err)
	}
	raw, ok := m[name]
	if !ok {
		t.Fatalf("result has no %q: %s", name, r.raw)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("result %q of %s: %v", name, r.raw, err)
	}
}

func (r reply) has(t *testing.T, name string) bool {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r.Result, &m); err != nil {
		t.Fatalf("result of %s: %v", r.raw, err)
	}
	_, ok := m[name]
	return ok
}

func wantError(t *testing.T, r reply, id string, code int64, contains string) {
	t.Helper()
	if r.Error == nil || r.Error.Code != code {
		t.Fatalf("want error %d, got %s", code, r.raw)
	}
	if string(r.ID) != id {
		t.Fatalf("want id %s, got %s", id, r.raw)
	}
	if !strings.Contains(r.Error.Message, contains) {
		t.Fatalf("error message %q does not contain %q", r.Error.Message, contains)
	}
}

func TestErrorIsComparesCode(t *testing.T) {
	err := errors.Join(errors.New("x"), &actor.Error{Code: -32602, Message: "unknown tool"})
	if !errors.Is(err, actor.ErrInvalidParams) || errors.Is(err, actor.ErrInvalidRequest) {
		t.Fatal("errors.Is does not compare codes")
	}
}

func toolsRegistry() *tool.Registry { return tool.NewRegistry(testTools()...) }

// gate is a tool that blocks, deaf to its context, until the test opens it: a call to it is still
// running whatever the test does meanwhile. Open it before the session ends (defer g.open()).
type gate struct {
	once    sync.Once
	opening chan struct{}
}

func newGate() *gate { return &gate{opening: make(chan struct{})} }

func (g *gate) open() { g.once.Do(func() { close(g.opening) }) }

// serve adds the gate to the tools a session serves (an edit for startClient).
func (g *gate) serve(cfg *actor.Config) {
	cfg.Tools = tool.NewRegistry(append(testTools(), tool.New(tool.Tool{
		Name: "gate", Description: "Blocks until the test opens it, whatever its context says.",
		Annotations: tool.Annotations{ReadOnlyHint: ptr(true)},
	}, func(context.Context, *tool.Call, json.RawMessage) (any, error) {
		<-g.opening
		return map[string]bool{"opened": true}, nil
	}))...)
}

func ptr[T any](v T) *T { return &v }
