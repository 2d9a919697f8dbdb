package session

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/vzn/vx/engine/handoff"
	"github.com/vzn/vx/proc"
)

// childOrderFD is the descriptor a Child reads its order from; it writes its events to 3 and
// reads a hand-off from 4 (the order's --events-fd and --handoff-fd say so).
const childOrderFD = 5

// runGrace is how long the `vx run` child of a cancelled call has, after SIGTERM, to stop its
// tasks (it gives each task proc.DefaultGrace) and record the run as cancelled, before it and
// every process it started get SIGKILL.
const runGrace = proc.DefaultGrace + time.Second

// stderrTail is how much of the child's stderr is kept, for the message of a child that wrote
// no error event.
const stderrTail = 64 << 10

// A Child is a `vx run` child of the server: `vx __await-run 5` (handoff.AwaitRunArg), which loads
// its workspace and then waits for its order (handoff.Order: the `vx run` command line and the
// call's marker) on descriptor 5; it writes its events to 3 and reads a hand-off from 4 when its
// order says --handoff-fd 4. A call starts one and orders it at once, or takes the one the session
// started ahead (KeepChild), which has started and loaded its config already (figures:
// docs/performance.md, "The server's shortcuts: memo, hand-off, child started ahead").
type Child struct {
	root string
	// Key is the secret this child's hand-off carries (handoff.Order.Key): it goes down the
	// order's pipe, never through the command line or the environment, which /proc shows.
	Key string
	// The server's ends of the pipes: the order written, the hand-off written, the events read.
	Order, Handoff, Events *os.File
	stdout                 bytes.Buffer
	stderr                 tailBuffer
	// stop ends the child: SIGTERM, the grace, then SIGKILL to everything it started.
	stop context.CancelFunc
	// done is closed once the child was reaped; res and err then say how it ended.
	done chan struct{}
	res  proc.Result
	err  error
}

// StartChild starts a child in root, and answers once it started (or could not start).
func (s *Session) StartChild(root string) (*Child, error) {
	if s.exe == "" {
		return nil, errors.New("runTasks: the vx executable is unknown")
	}
	c := &Child{root: root, Key: rand.Text(), stderr: tailBuffer{max: stderrTail}, done: make(chan struct{})}
	theirs, err := c.pipes()
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	c.stop = stop
	started := make(chan struct{})
	go func() {
		defer close(c.done)
		defer stop()
		c.res, c.err = proc.Run(ctx, proc.Spec{
			Path: s.exe, Args: []string{handoff.AwaitRunArg, fmt.Sprint(childOrderFD)}, Dir: root,
			Env:    s.environ,
			Stdout: &c.stdout, Stderr: &c.stderr,
			ExtraFiles: theirs,
			Grace:      runGrace,
			// The child's tasks are in process groups of their own: a cancelled call's SIGKILL must
			// reach them too.
			KillTree: true,
			// Should the server itself be SIGKILLed, the run is not left to go on unowned: SIGHUP,
			// which the server never sends otherwise, tells vx run to kill its tasks at once.
			ParentDeathSignal: syscall.SIGHUP,
			// Only the child holds its ends now: the events reader sees EOF once the run is over,
			// and the hand-off's writer stops should the child die.
			OnStart: func(int) {
				closeFiles(theirs)
				close(started)
			},
		})
		closeFiles(theirs) // a child that never started
	}()
	select {
	case <-started:
		return c, nil
	case <-c.done:
		c.ClosePipes()
		return nil, fmt.Errorf("runTasks: start vx run: %w", c.err)
	}
}

// pipes makes the child's pipes: the server keeps the events' reading end and the hand-off's and
// the order's writing ends; the child's ends are answered, in descriptor order from 3.
func (c *Child) pipes() (theirs []*os.File, err error) {
	for _, childReads := range []bool{false, true, true} {
		r, w, err := os.Pipe()
		if err != nil {
			closeFiles(theirs)
			c.ClosePipes()
			return nil, fmt.Errorf("runTasks: a pipe for vx run: %w", err)
		}
		if childReads {
			theirs = append(theirs, r)
			if c.Handoff == nil {
				c.Handoff = w
			} else {
				c.Order = w
			}
		} else {
			theirs, c.Events = append(theirs, w), r
		}
	}
	return theirs, nil
}

// ClosePipes closes the server's ends of the child's pipes.
func (c *Child) ClosePipes() {
	closeFiles([]*os.File{c.Order, c.Handoff, c.Events})
}

// Stop ends the child: SIGTERM, the grace, then SIGKILL to everything it started.
func (c *Child) Stop() { c.stop() }

// Done is closed once the child was reaped.
func (c *Child) Done() <-chan struct{} { return c.done }

// Result says how the child ended; it is read once Done is closed.
func (c *Child) Result() (proc.Result, error) { return c.res, c.err }

// Stdout is what the child printed; it is read once Done is closed.
func (c *Child) Stdout() []byte { return c.stdout.Bytes() }

// StderrTail is the last of what the child wrote to stderr; it is read once Done is closed.
func (c *Child) StderrTail() []byte { return c.stderr.Bytes() }

// exited reports whether the child has ended.
func (c *Child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// discard ends a child that was given no order: with the order's pipe closed empty it ends on
// its own, and the stop covers one still loading its config. It waits for the child.
func (c *Child) discard() {
	c.Order.Close()
	c.stop()
	<-c.done
	c.ClosePipes()
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}

// child is the Child a session keeps started ahead of the next runTasks call.
type child struct {
	keep     bool
	mu       sync.Mutex
	kept     *Child
	starting bool
	closed   bool
	// starters are the goroutines starting one.
	starters sync.WaitGroup
}

// TakeChild answers the child kept for a call in root, nil for none; one of another folder or
// that has ended is let go.
func (s *Session) TakeChild(root string) *Child {
	s.child.mu.Lock()
	c := s.child.kept
	s.child.kept = nil
	s.child.mu.Unlock()
	if c == nil {
		return nil
	}
	if c.root != root || c.exited() {
		c.discard()
		return nil
	}
	return c
}

// KeepChild starts, in the background, the child that the next call in root takes, where the
// session keeps one (Options.KeepChild) and none is kept or starting.
func (s *Session) KeepChild(root string) {
	k := &s.child
	if !k.keep {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed || k.kept != nil || k.starting {
		return
	}
	k.starting = true
	k.starters.Go(func() {
		c, err := s.StartChild(root)
		k.mu.Lock()
		k.starting = false
		keep := err == nil && !k.closed && k.kept == nil
		if keep {
			k.kept = c
		}
		k.mu.Unlock()
		if err != nil {
			fmt.Fprintf(s.stderr, "vx mcp: runTasks: %v\n", err)
		} else if !keep {
			c.discard()
		}
	})
}

// closeChild ends the child kept for the next call, and any being started, and waits for them.
func (s *Session) closeChild() {
	k := &s.child
	k.mu.Lock()
	k.closed = true
	k.mu.Unlock()
	k.starters.Wait()
	k.mu.Lock()
	c := k.kept
	k.kept = nil
	k.mu.Unlock()
	if c != nil {
		c.discard()
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

// Bytes returns the last max bytes written.
func (t *tailBuffer) Bytes() []byte {
	if len(t.buf) > t.max {
		return t.buf[len(t.buf)-t.max:]
	}
	return t.buf
}
