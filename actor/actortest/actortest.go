// Package actortest runs the MCP server core as a real process for tests: a test
// binary whose TestMain calls MaybeServe becomes, when re-executed with
// VX_ACTOR_TEST_SERVER set, an MCP server on its stdio with a handful of test tools
// (echo, sleep, panic, progress, refuse, fail, scalar) plus any the caller adds.
// Start launches such a child and speaks raw frames to it.
package actortest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vzn/vx/actor"
	"github.com/vzn/vx/tools"
)

// Environment variables the child server reads.
const (
	// EnvServer turns a test binary calling MaybeServe into the server.
	EnvServer = "VX_ACTOR_TEST_SERVER"
	// EnvWorkers sets Config.Workers.
	EnvWorkers = "VX_ACTOR_TEST_WORKERS"
	// EnvPageSize sets Config.ToolsPageSize.
	EnvPageSize = "VX_ACTOR_TEST_PAGE_SIZE"
	// EnvMaxLine sets Config.MaxLineBytes.
	EnvMaxLine = "VX_ACTOR_TEST_MAX_LINE"
	// EnvLogLevel sets the server's log level (default "warn").
	EnvLogLevel = "VX_ACTOR_TEST_LOG"
)

// Secret is the value the test server's Mask hides as "***".
const Secret = "s3cr3t-value"

// Mask is the test server's Config.Mask.
func Mask(s string) string { return strings.ReplaceAll(s, Secret, "***") }

// MaybeServe returns at once unless EnvServer is set; then it serves MCP on the
// process's stdio, guarded, with Tools and the extra tools given, until EOF or
// SIGTERM/SIGINT, and exits (0 on a clean shutdown). Call it first in TestMain.
func MaybeServe(extra ...tools.Tool) {
	if os.Getenv(EnvServer) == "" {
		return
	}
	os.Exit(serve(extra))
}

func serve(extra []tools.Tool) int {
	level, err := zerolog.ParseLevel(envOr(EnvLogLevel, "warn"))
	if err != nil {
		level = zerolog.WarnLevel
	}
	logger := zerolog.New(os.Stderr).Level(level).With().Timestamp().Logger()
	out, err := actor.GuardStdout()
	if err != nil {
		logger.Error().Err(err).Msg("guard stdout")
		return 2
	}
	defer out.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	err = actor.Serve(ctx, actor.Config{
		In:            os.Stdin,
		Out:           out,
		Logger:        logger,
		Tools:         tools.NewRegistry(append(Tools(), extra...)...),
		Workers:       envInt(EnvWorkers),
		Mask:          Mask,
		ServerName:    "vx-test",
		ServerVersion: "0.0.0-test",
		MaxLineBytes:  envInt(EnvMaxLine),
		ToolsPageSize: envInt(EnvPageSize),
	})
	switch {
	case err == nil:
		return 0
	case errors.Is(err, context.Canceled):
		logger.Info().Msg("stopped by signal")
		return 0
	default:
		logger.Error().Err(err).Msg("serve")
		return 1
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func envInt(key string) int {
	n, _ := strconv.Atoi(os.Getenv(key))
	return n
}

func ptr[T any](v T) *T { return &v }

// Tools returns the test tools.
func Tools() []tools.Tool {
	objectOut := json.RawMessage(`{"type":"object"}`)
	return []tools.Tool{
		{
			Name: "echo", Title: "Echo", Description: "Answers its arguments.",
			InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":true}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"args":{"type":"object"}},"required":["args"]}`),
			Annotations:  tools.Annotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(false)},
			Handler: func(_ context.Context, c *tools.Call) (any, error) {
				return struct {
					Args     json.RawMessage `json:"args"`
					Revision string          `json:"revision"`
				}{c.Args, c.ProtocolVersion}, nil
			},
		},
		{
			Name: "sleep", Title: "Sleep", Description: "Sleeps ms milliseconds, or until cancelled unless ignoreCancel.",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer"},"ignoreCancel":{"type":"boolean"}}}`),
			OutputSchema: objectOut,
			Annotations:  tools.Annotations{ReadOnlyHint: ptr(true), IdempotentHint: ptr(true)},
			Handler: func(ctx context.Context, c *tools.Call) (any, error) {
				var a struct {
					MS           int  `json:"ms"`
					IgnoreCancel bool `json:"ignoreCancel"`
				}
				if err := tools.DecodeArgs(c.Args, &a); err != nil {
					return nil, err
				}
				t := time.NewTimer(time.Duration(a.MS) * time.Millisecond)
				defer t.Stop()
				if a.IgnoreCancel {
					<-t.C
				} else {
					select {
					case <-t.C:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				return map[string]int{"slept": a.MS}, nil
			},
		},
		{
			Name: "panic", Description: "Panics.",
			Handler: func(context.Context, *tools.Call) (any, error) { panic("tool panicked on purpose: " + Secret) },
		},
		{
			Name: "progress", Title: "Progress", Description: "Reports steps of progress, ms apart.",
			OutputSchema: objectOut,
			Handler: func(ctx context.Context, c *tools.Call) (any, error) {
				var a struct {
					Steps int `json:"steps"`
					MS    int `json:"ms"`
				}
				if err := tools.DecodeArgs(c.Args, &a); err != nil {
					return nil, err
				}
				for i := 1; i <= a.Steps; i++ {
					c.Progress(float64(i), float64(a.Steps), fmt.Sprintf("step %d %s", i, Secret))
					c.Progress(float64(i)-0.5, float64(a.Steps), "not increasing: dropped")
					select {
					case <-time.After(time.Duration(a.MS) * time.Millisecond):
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				return map[string]int{"steps": a.Steps}, nil
			},
		},
		{
			Name: "refuse", Description: "Refuses, quoting the secret.",
			Handler: func(context.Context, *tools.Call) (any, error) {
				return nil, tools.Refusef("argument %q must be %s", "task", Secret)
			},
		},
		{
			Name: "fail", Description: "Fails with an error quoting the secret.",
			Handler: func(context.Context, *tools.Call) (any, error) {
				return nil, fmt.Errorf("config failed to load: token %s", Secret)
			},
		},
		{
			Name: "scalar", Description: "Answers a number, not an object.",
			Handler: func(context.Context, *tools.Call) (any, error) { return 42, nil },
		},
	}
}

// Proc is a child test server spoken to with raw frames.
type Proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte
	stderr *SyncBuffer
	done   chan struct{}
	exit   error
}

// SyncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Command returns the command that runs this test binary as the server with
// the extra environment (KEY=VALUE) given.
func Command(env ...string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the test binary: %w", err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(append(os.Environ(), EnvServer+"=1"), env...)
	return cmd, nil
}

// Start runs the server as a child and returns it; the test's cleanup closes
// its stdin and waits for it (killing it after a while).
func Start(t testing.TB, env ...string) *Proc {
	t.Helper()
	cmd, err := Command(env...)
	if err != nil {
		t.Fatal(err)
	}
	p := &Proc{cmd: cmd, lines: make(chan []byte, 1<<16), stderr: &SyncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		defer close(p.lines)
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				p.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		<-readerDone
		p.exit = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.stdin.Close()
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
			t.Errorf("test server did not exit after EOF; stderr:\n%s", p.stderr)
		}
	})
	return p
}

// Send writes one line (a newline is added).
func (p *Proc) Send(t testing.TB, line string) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		t.Fatalf("writing to the server: %v", err)
	}
}

// Write writes raw bytes.
func (p *Proc) Write(b []byte) error {
	_, err := p.stdin.Write(b)
	return err
}

// Recv returns the next line the server wrote, failing the test after timeout.
func (p *Proc) Recv(t testing.TB, timeout time.Duration) []byte {
	t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			t.Fatalf("server closed its stdout; stderr:\n%s", p.stderr)
		}
		return line
	case <-time.After(timeout):
		t.Fatalf("no reply within %v; stderr:\n%s", timeout, p.stderr)
	}
	return nil
}

// Lines returns the channel of lines the server writes (closed at its EOF).
func (p *Proc) Lines() <-chan []byte { return p.lines }

// NoReply fails the test if the server writes a line within d.
func (p *Proc) NoReply(t testing.TB, d time.Duration) {
	t.Helper()
	select {
	case line, ok := <-p.lines:
		if ok {
			t.Fatalf("unexpected line from the server: %s", line)
		}
	case <-time.After(d):
	}
}

// CloseStdin closes the server's stdin (EOF).
func (p *Proc) CloseStdin() error { return p.stdin.Close() }

// Signal sends sig to the server.
func (p *Proc) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Wait waits for the server to exit and returns its exit error.
func (p *Proc) Wait(t testing.TB, timeout time.Duration) error {
	t.Helper()
	select {
	case <-p.done:
		return p.exit
	case <-time.After(timeout):
		t.Fatalf("server did not exit within %v; stderr:\n%s", timeout, p.stderr)
	}
	return nil
}

// Stderr returns what the server wrote to stderr so far.
func (p *Proc) Stderr() string { return p.stderr.String() }
