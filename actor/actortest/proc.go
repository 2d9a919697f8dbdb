package actortest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

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
