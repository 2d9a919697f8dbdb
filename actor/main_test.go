package actor_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/vzn/vx/actor"
	"github.com/vzn/vx/actor/actortest"
	"github.com/vzn/vx/tools"
)

func TestMain(m *testing.M) {
	actortest.MaybeServe(printerTool())
	goleak.VerifyTestMain(m)
}

// session is a server run in process over io.Pipes.
type session struct {
	t      *testing.T
	in     *io.PipeWriter
	lines  chan []byte
	errc   chan error
	cancel context.CancelFunc
	log    *actortest.SyncBuffer
}

// startSession serves the test tools in process; edit adjusts the config.
func startSession(t *testing.T, edit func(*actor.Config)) *session {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	s := &session{t: t, in: inW, lines: make(chan []byte, 4096), errc: make(chan error, 1), cancel: cancel, log: &actortest.SyncBuffer{}}
	cfg := actor.Config{
		In: inR, Out: outW,
		Logger:        zerolog.New(s.log).Level(zerolog.DebugLevel),
		Tools:         tools.NewRegistry(testTools()...),
		Workers:       4,
		Mask:          actortest.Mask,
		ServerName:    "vx-test",
		ServerVersion: "1.2.3",
	}
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

func (s *session) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("send: %v", err)
	}
}

func (s *session) recv() []byte {
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
func (s *session) recvMsg() reply {
	s.t.Helper()
	line := s.recv()
	var r reply
	if err := json.Unmarshal(line, &r); err != nil {
		s.t.Fatalf("reply %s is not a JSON object: %v", line, err)
	}
	r.raw = line
	return r
}

func (s *session) noReply(d time.Duration) {
	s.t.Helper()
	select {
	case line, ok := <-s.lines:
		if ok {
			s.t.Fatalf("unexpected line: %s", line)
		}
	case <-time.After(d):
	}
}

// call sends a request and returns its reply (the next line).
func (s *session) call(line string) reply {
	s.t.Helper()
	s.send(line)
	return s.recvMsg()
}

// closeAndWait closes stdin and returns Serve's result.
func (s *session) closeAndWait() error {
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

func toolsRegistry() *tools.Registry { return tools.NewRegistry(testTools()...) }
