package actor_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vzn/vx/actor/actortest"
)

// These tests run the server as a real process (this test binary re-executed),
// so that the stdout guard, signals, EOF and a broken pipe are the real ones.

const initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func recvReply(t *testing.T, p *actortest.Proc) reply {
	t.Helper()
	line := p.Recv(t, 10*time.Second)
	var r reply
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatalf("line on the reply stream is not a JSON-RPC message: %q", line)
	}
	r.raw = line
	return r
}

func TestProcessGuardsStdout(t *testing.T) {
	p := actortest.Start(t)
	p.Send(t, initLine)
	recvReply(t, p)
	p.Send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"printer"}}`)
	r := recvReply(t, p)
	if string(r.ID) != "1" || r.Error != nil || strings.Contains(string(r.Result), "isError") {
		t.Fatalf("printer: %s", r.raw)
	}
	p.Send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if r := recvReply(t, p); string(r.ID) != "2" {
		t.Fatalf("ping after printer: %s", r.raw)
	}
	if err := p.CloseStdin(); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(t, 10*time.Second); err != nil {
		t.Fatalf("exit after EOF: %v; stderr:\n%s", err, p.Stderr())
	}
	for line := range p.Lines() {
		t.Fatalf("extra line on the reply stream: %q", line)
	}
	for _, mark := range []string{markOSStdout, markPrintln, markRawWrite, markChild} {
		if !strings.Contains(p.Stderr(), mark) {
			t.Errorf("%s did not land on stderr:\n%s", mark, p.Stderr())
		}
	}
}

func TestProcessLineLimit(t *testing.T) {
	p := actortest.Start(t)
	const limit = 16 << 20
	pad := func(id string, n int) string {
		head := `{"jsonrpc":"2.0","id":` + id + `,"method":"ping","params":{"pad":"`
		tail := `"}}`
		return head + strings.Repeat("p", n-len(head)-len(tail)) + tail
	}
	p.Send(t, pad(`"over"`, limit+1))
	r := recvReply(t, p)
	if r.code() != -32600 || string(r.ID) != `"over"` || !strings.Contains(r.Error.Message, "16777216") {
		t.Fatalf("line of limit+1: %s", r.raw)
	}
	p.Send(t, pad(`"exact"`, limit))
	if r := recvReply(t, p); r.Error != nil || string(r.ID) != `"exact"` {
		t.Fatalf("line of exactly 16 MiB: %s", r.raw)
	}
	p.Send(t, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if r := recvReply(t, p); string(r.ID) != "3" {
		t.Fatalf("after the long lines: %s", r.raw)
	}
}

func TestProcessRawFrames(t *testing.T) {
	p := actortest.Start(t)
	p.Send(t, initLine)
	recvReply(t, p)
	for _, tc := range []struct {
		line string
		want string // the exact reply line
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{`{broken`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: not JSON"}}`},
		{`[]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: empty batch"}}`},
		{`{"jsonrpc":"2.0","id":2}`, `{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"invalid request: \"method\" is missing"}}`},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope"}}`, `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"invalid params: unknown tool \"nope\""}}`},
		{`[{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`, `[{"jsonrpc":"2.0","id":4,"result":{}}]`},
	} {
		p.Send(t, tc.line)
		if got := strings.TrimSuffix(string(p.Recv(t, 10*time.Second)), "\n"); got != tc.want {
			t.Errorf("%s\n got: %s\nwant: %s", tc.line, got, tc.want)
		}
	}
	p.Send(t, `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`)
	p.Send(t, `{"jsonrpc":"2.0","id":"barrier","method":"ping"}`)
	if r := recvReply(t, p); string(r.ID) != `"barrier"` {
		t.Fatalf("a batch of notifications was answered: %s", r.raw)
	}
}

// TestProcessCancelRacingReply cancels calls at every stage: before they run,
// while they run, and as they finish. Each gets at most one reply, and a call
// still running when its cancel is read gets none.
func TestProcessCancelRacingReply(t *testing.T) {
	p := actortest.Start(t, actortest.EnvWorkers+"=4")
	p.Send(t, initLine)
	recvReply(t, p)
	const n = 400
	var b strings.Builder
	for i := range n {
		ms := i % 3 // 0..2 ms: the cancel races the reply
		switch {
		case i%100 == 5: // deaf to its context, still running when the cancel arrives: never answered
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":1000,"ignoreCancel":true}}}`+"\n", i)
		case i%10 == 0: // still running when the cancel arrives: never answered
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}`+"\n", i)
		default:
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":%d}}}`+"\n", i, ms)
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`+"\n", i)
	}
	b.WriteString(`{"jsonrpc":"2.0","id":"end","method":"tools/call","params":{"name":"sleep","arguments":{"ms":1500}}}` + "\n")
	if err := p.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for {
		r := recvReply(t, p)
		seen[string(r.ID)]++
		if string(r.ID) == `"end"` {
			break
		}
	}
	answered := 0
	for i := range n {
		id := fmt.Sprint(i)
		switch c := seen[id]; {
		case c > 1:
			t.Errorf("call %s answered %d times", id, c)
		case c == 1 && (i%10 == 0 || i%100 == 5):
			t.Errorf("call %s answered although it was still running when cancelled", id)
		case c == 1:
			answered++
		}
	}
	t.Logf("%d of %d cancelled calls were answered before their cancel was read", answered, n)
}

func TestProcessSIGTERM(t *testing.T) {
	p := actortest.Start(t)
	p.Send(t, initLine)
	recvReply(t, p)
	p.Send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}`)
	p.Send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	recvReply(t, p)
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// stdin stays open: the signal alone must end the pending read.
	if err := p.Wait(t, 5*time.Second); err != nil {
		t.Fatalf("exit after SIGTERM: %v; stderr:\n%s", err, p.Stderr())
	}
	for line := range p.Lines() {
		t.Fatalf("reply after SIGTERM to a cancelled call: %s", line)
	}
}

func TestProcessEOF(t *testing.T) {
	p := actortest.Start(t)
	p.Send(t, initLine)
	recvReply(t, p)
	p.Send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}`)
	p.Send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	recvReply(t, p)
	start := time.Now()
	if err := p.CloseStdin(); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(t, 5*time.Second); err != nil {
		t.Fatalf("exit after EOF: %v", err)
	}
	t.Logf("exit %v after EOF with a call in flight", time.Since(start))
	for line := range p.Lines() {
		t.Fatalf("reply after EOF: %s", line)
	}
}

// TestProcessEOFAnswersWhatWasRead writes requests and closes stdin at once, as
// `printf '…' | vx mcp` does: every request read is answered, then the server exits 0.
func TestProcessEOFAnswersWhatWasRead(t *testing.T) {
	p := actortest.Start(t)
	session := initLine + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":100}}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}` + "\n"
	if err := p.Write([]byte(session)); err != nil {
		t.Fatal(err)
	}
	if err := p.CloseStdin(); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(t, 10*time.Second); err != nil {
		t.Fatalf("exit after EOF: %v; stderr:\n%s", err, p.Stderr())
	}
	got := map[string]bool{}
	for line := range p.Lines() {
		var r reply
		if err := json.Unmarshal(line, &r); err != nil || r.Error != nil {
			t.Fatalf("reply %s: %v", line, err)
		}
		got[string(r.ID)] = true
	}
	if len(got) != 4 || !got["0"] || !got["1"] || !got["2"] || !got["3"] {
		t.Fatalf("replies to %v, want 0 to 3", got)
	}
}

// TestProcessBrokenPipe closes the read end of the server's stdout while its
// stdin stays open: the server must notice on its next write and exit non-zero.
func TestProcessBrokenPipe(t *testing.T) {
	cmd, err := actortest.Command()
	if err != nil {
		t.Fatal(err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stderr := &actortest.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = stdoutW, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdoutW.Close()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	replies := bufio.NewReader(stdoutR)
	io.WriteString(stdin, initLine+"\n")
	if line, err := replies.ReadString('\n'); err != nil || !strings.Contains(line, `"id":0`) {
		t.Fatalf("initialize reply %q: %v", line, err)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}`+"\n")
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
	line, err := replies.ReadString('\n')
	if err != nil || !strings.Contains(line, `"id":2`) {
		t.Fatalf("first reply %q: %v", line, err)
	}
	stdoutR.Close()
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":3,"method":"ping"}`+"\n")
	select {
	case err := <-waited:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("exit after a broken reply pipe: %v, want status 1; stderr:\n%s", err, stderr)
		}
		if !strings.Contains(stderr.String(), "broken pipe") {
			t.Fatalf("stderr does not name the broken pipe:\n%s", stderr)
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-waited
		t.Fatalf("server still running after its reply pipe broke; stderr:\n%s", stderr)
	}
}
