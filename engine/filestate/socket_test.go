//go:build unix

package filestate

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An endless request line is cut at maxRequest: the server closes the connection, where it used
// to read (and keep) all of it until its deadline. The writer counts what it could send before the
// server hung up: the socket's buffers and the bound, far below what an unbounded read takes.
func TestServerBoundsTheRequestLine(t *testing.T) {
	state := serve(t, "/ws", func(context.Context) (*Snapshot, error) { return sampleSnapshot("/ws"), nil })
	var sent [4]int
	done := make(chan int, len(sent))
	for range sent {
		go func() {
			c, err := net.Dial("unix", SocketPath(state))
			if err != nil {
				done <- -1
				return
			}
			defer c.Close()
			chunk := bytes.Repeat([]byte("x"), 64<<10)
			n := 0
			for n < 256<<20 {
				w, err := c.Write(chunk)
				n += w
				if err != nil {
					break
				}
			}
			done <- n
		}()
	}
	for i := range sent {
		sent[i] = <-done
		if sent[i] < 0 || sent[i] >= 32<<20 {
			t.Fatalf("connection %d: the server took %d bytes of an endless request line", i, sent[i])
		}
	}
	if _, err := Ask(context.Background(), state, "/ws", 5*time.Second); err != nil {
		t.Fatalf("the server after endless lines: %v", err)
	}
}

// Many idle connections hold at most maxConns of the server's goroutines; the others wait in the
// kernel's backlog, and a question asked behind them is answered once the idle ones are cut.
func TestServerBoundsConnections(t *testing.T) {
	state := shortDir(t)
	srv, err := Listen(state, "/ws", func(context.Context) (*Snapshot, error) { return sampleSnapshot("/ws"), nil })
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for range 3 * maxConns {
		c, err := net.Dial("unix", SocketPath(state))
		if err != nil {
			break // the backlog is full: refused, as a bound should
		}
		idle = append(idle, c)
	}
	most := 0
	for range 200 {
		srv.mu.Lock()
		most = max(most, len(srv.conns))
		srv.mu.Unlock()
		if most >= maxConns {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if most > maxConns || most == 0 {
		t.Fatalf("%d connections served at once, want at most %d", most, maxConns)
	}
	if _, err := Ask(context.Background(), state, "/ws", 20*time.Second); err != nil {
		t.Fatalf("a question behind idle connections: %v", err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.conns) > maxConns {
		t.Fatalf("%d connections served at once, want at most %d", len(srv.conns), maxConns)
	}
}

// A symlink planted as watch.lock is refused by name; what it points at is never made.
func TestLockThroughASymlinkIsRefused(t *testing.T) {
	state := shortDir(t)
	target := filepath.Join(shortDir(t), "planted")
	if err := os.Symlink(target, filepath.Join(state, lockName)); err != nil {
		t.Fatal(err)
	}
	srv, err := Listen(state, "/ws", nil)
	if err == nil {
		srv.Close()
		t.Fatal("a server took a lock file that is a symlink")
	}
	if !strings.Contains(err.Error(), filepath.Join(state, lockName)) || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("%v, want the lock file named as a symlink", err)
	}
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the link's target was made: %v", err)
	}
}

// A fake server of this user that claims a 300 MB answer and streams it is cut after the header:
// the asker refuses an answer larger than the workspace's file state can be, reading none of it.
func TestAskRefusesAnAnswerTooLarge(t *testing.T) {
	state := shortDir(t)
	ln, err := net.Listen("unix", SocketPath(state))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := os.Chmod(SocketPath(state), 0o600); err != nil {
		t.Fatal(err)
	}
	sent := make(chan int, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			sent <- -1
			return
		}
		defer c.Close()
		var head [10]byte
		head[0], head[1] = answerWorking, answerOK
		binary.BigEndian.PutUint64(head[2:], 300<<20)
		n, _ := c.Write(head[:])
		zeros := make([]byte, 1<<20)
		for n < 300<<20 {
			w, err := c.Write(zeros)
			n += w
			if err != nil {
				break
			}
		}
		sent <- n
	}()
	_, err = Ask(context.Background(), state, "/ws", 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("%v, want the answer refused for its size", err)
	}
	if n := <-sent; n >= 32<<20 {
		t.Fatalf("the asker read %d bytes of a 300 MB answer", n)
	}
}

// The answer's bound follows the workspace: git's index makes it larger, never past maxAnswer.
func TestAnswerLimit(t *testing.T) {
	root := t.TempDir()
	if got := answerLimit(root); got != baseAnswer {
		t.Fatalf("outside git: %d, want %d", got, baseAnswer)
	}
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".git/index"), make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "apps/web")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, want := answerLimit(sub), int64(baseAnswer+perIndexByte<<20); got != want {
		t.Fatalf("under a repository with a 1 MiB index: %d, want %d", got, want)
	}
}

// askerEnv names the state folder and root TestMain's helper asks for, from another process.
const askerEnv = "VX_FILESTATE_TEST_ASK"

// askFrom asks the socket from a child process started as attr says, and answers what it said.
func askFrom(t *testing.T, state, root string, wrap []string, attr *syscall.SysProcAttr) string {
	t.Helper()
	args := append(wrap, os.Args[0], "-test.run=^$")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), askerEnv+"="+state+"\n"+root)
	cmd.SysProcAttr = attr
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the asking process: %v\n%s", err, out)
	}
	return string(out)
}

// askHelper is the child of askFrom: it asks and prints the answer or the error.
func askHelper() bool {
	v, ok := os.LookupEnv(askerEnv)
	if !ok {
		return false
	}
	state, root, _ := strings.Cut(v, "\n")
	snap, err := Ask(context.Background(), state, root, 5*time.Second)
	if err != nil {
		fmt.Println("error:", err)
	} else {
		fmt.Println("answered:", snap.Dirs(), "folders")
	}
	return true
}

// A process confined as vx's sandbox confines a task is refused: one in a network namespace of
// its own, one with no_new_privs. Another process of the same user, unconfined, is answered.
func TestSandboxedAskerIsRefused(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("vx's sandbox is Linux's")
	}
	state := serve(t, "/ws", func(context.Context) (*Snapshot, error) { return sampleSnapshot("/ws"), nil })
	if out := askFrom(t, state, "/ws", nil, nil); !strings.HasPrefix(out, "answered:") {
		t.Fatalf("an unconfined process: %s", out)
	}
	t.Run("network namespace", func(t *testing.T) {
		attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
		if os.Getuid() != 0 {
			attr.Cloneflags |= syscall.CLONE_NEWUSER
			attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
			attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		}
		probe := exec.Command("/bin/true")
		probe.SysProcAttr = attr
		if err := probe.Run(); err != nil {
			t.Skipf("no network namespace can be made here: %v", err)
		}
		if out := askFrom(t, state, "/ws", nil, attr); !strings.Contains(out, "a sandboxed task gets no file state") {
			t.Fatalf("a process in another network namespace: %s", out)
		}
	})
	t.Run("no_new_privs", func(t *testing.T) {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("no setpriv here")
		}
		if out := askFrom(t, state, "/ws", []string{setpriv, "--no-new-privs"}, nil); !strings.Contains(out, "a sandboxed task gets no file state") {
			t.Fatalf("a process with no_new_privs: %s", out)
		}
	})
}
