package stress

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/actor/actortest"
)

// The MCP benchmarks run the server as a real process. Without -race:
//
//	go test -run '^$' -bench MCP -benchtime 200x ./stress/
//
// The *VX variants build cmd/vx and serve a one-line workspace with `vx mcp`;
// the others serve the test tools from this test binary.

const initializeLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`

// rawProc is a server process spoken to one line at a time.
type rawProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

func startRaw(tb testing.TB, cmd *exec.Cmd) *rawProc {
	tb.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	return &rawProc{cmd: cmd, stdin: stdin, out: bufio.NewReaderSize(stdout, 1<<20)}
}

func (p *rawProc) send(tb testing.TB, line string) {
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		tb.Fatalf("write: %v", err)
	}
}

func (p *rawProc) recv(tb testing.TB) string {
	line, err := p.out.ReadString('\n')
	if err != nil {
		tb.Fatalf("read: %v", err)
	}
	return line
}

func (p *rawProc) call(tb testing.TB, line string) string {
	p.send(tb, line)
	return p.recv(tb)
}

func (p *rawProc) close(tb testing.TB) {
	_ = p.stdin.Close()
	_, _ = io.Copy(io.Discard, p.out)
	if err := p.cmd.Wait(); err != nil {
		tb.Errorf("server exit: %v", err)
	}
}

func testServer(tb testing.TB, env ...string) *exec.Cmd {
	tb.Helper()
	cmd, err := actortest.Command(env...)
	if err != nil {
		tb.Fatal(err)
	}
	return cmd
}

// vxServer builds cmd/vx once per benchmark and returns a command running
// `vx mcp` in a workspace that declares the plugin, or skips when vx cannot be
// built here.
func vxServer(b *testing.B) func() *exec.Cmd {
	b.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	exe := filepath.Join(dir, "vx")
	build := exec.Command("go", "build", "-o", exe, "./cmd/vx")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		b.Skipf("building vx: %v\n%s", err, out)
	}
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(filepath.Join(ws, "packages", "app"), 0o755); err != nil {
		b.Fatal(err)
	}
	config := "import { defineWorkspace } from '@vzn/vx/config'\nimport { mcp } from '@vzn/vx-mcp'\n" +
		"export default defineWorkspace({ projects: ['packages/*'], plugins: [mcp()], tasks: { build: { command: 'true' } } })\n"
	if err := os.WriteFile(filepath.Join(ws, "vx.workspace.ts"), []byte(config), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "packages", "app", "package.json"), []byte(`{"name":"app"}`), 0o644); err != nil {
		b.Fatal(err)
	}
	return func() *exec.Cmd {
		cmd := exec.Command(exe, "mcp")
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "VX_CACHE_DIR="+filepath.Join(dir, "cache"))
		return cmd
	}
}

// benchInitializeCold measures exec to the initialize reply, each on a fresh process.
func benchInitializeCold(b *testing.B, newCmd func() *exec.Cmd) {
	var total latencies
	for b.Loop() {
		b.StopTimer()
		cmd := newCmd()
		b.StartTimer()
		start := time.Now()
		p := startRaw(b, cmd)
		if reply := p.call(b, initializeLine); !strings.Contains(reply, `"protocolVersion":"2025-11-25"`) {
			b.Fatalf("initialize: %s", reply)
		}
		total = append(total, time.Since(start))
		b.StopTimer()
		p.close(b)
		b.StartTimer()
	}
	reportLatencies(b, total)
}

func BenchmarkMCPInitializeCold(b *testing.B) {
	benchInitializeCold(b, func() *exec.Cmd { return testServer(b) })
}

func BenchmarkMCPInitializeColdVX(b *testing.B) {
	newCmd := vxServer(b)
	b.ResetTimer()
	benchInitializeCold(b, newCmd)
}

// benchPingLoaded measures ping round trips while 64 tool calls are in flight
// (every worker busy, the rest queued). busyCall(i) must report progress once when it starts
// and then run until cancelled.
func benchPingLoaded(b *testing.B, p *rawProc, busyCall func(i int) string) {
	p.call(b, initializeLine)
	p.send(b, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i := range 64 {
		p.send(b, busyCall(i))
	}
	// Every worker is busy once as many busy calls as the server has workers (its default:
	// 2×NumCPU, at least 4) have reported their start.
	for started := 0; started < max(4, 2*runtime.NumCPU()); {
		if line := p.recv(b); strings.Contains(line, `"notifications/progress"`) {
			started++
		} else {
			b.Fatalf("before any reply, a busy call answered: %s", line)
		}
	}
	var rtts latencies
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if reply := p.call(b, fmt.Sprintf(`{"jsonrpc":"2.0","id":"p%d","method":"ping"}`, i)); !strings.Contains(reply, `"result":{}`) {
			b.Fatalf("ping: %s", reply)
		}
		rtts = append(rtts, time.Since(start))
	}
	b.StopTimer()
	reportLatencies(b, rtts)
	for i := range 64 {
		p.send(b, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"busy%d"}}`, i))
	}
	p.close(b)
}

func BenchmarkMCPPing64InFlight(b *testing.B) {
	p := startRaw(b, testServer(b))
	benchPingLoaded(b, p, func(i int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":"busy%d","method":"tools/call","params":{"name":"run","arguments":{"ms":600000},"_meta":{"progressToken":"b%d"}}}`, i, i)
	})
}

// benchToolsList measures tools/list round trips.
func benchToolsList(b *testing.B, p *rawProc, wantTools int) {
	p.call(b, initializeLine)
	p.send(b, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	var rtts latencies
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		reply := p.call(b, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i))
		rtts = append(rtts, time.Since(start))
		if n := strings.Count(reply, `"inputSchema"`); n != wantTools {
			b.Fatalf("tools/list listed %d tools, want %d: %.300s", n, wantTools, reply)
		}
	}
	b.StopTimer()
	reportLatencies(b, rtts)
	p.close(b)
}

func BenchmarkMCPToolsList(b *testing.B) {
	benchToolsList(b, startRaw(b, testServer(b)), len(actortest.Tools()))
}

func BenchmarkMCPToolsListVX(b *testing.B) {
	newCmd := vxServer(b)
	benchToolsList(b, startRaw(b, newCmd()), 15)
}

func reportLatencies(b *testing.B, l latencies) {
	if len(l) == 0 {
		return
	}
	b.ReportMetric(float64(l.quantile(0.5).Microseconds()), "p50-µs")
	b.ReportMetric(float64(l.quantile(0.99).Microseconds()), "p99-µs")
}
