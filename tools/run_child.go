package tools

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/vzn/vx/engine/handoff"
	"github.com/vzn/vx/engine/runout"
	"github.com/vzn/vx/proc"
)

// The descriptors of a runChild: the events it writes, the hand-off it reads, its order.
const (
	childEventsFD  = 3
	childHandoffFD = 4
	childOrderFD   = 5
)

// A runChild is a `vx run` child of the server: `vx __await-run 5` (handoff.AwaitRunArg), which
// loads its workspace and then waits for its order (handoff.Order: the `vx run` command line
// and the call's marker) on descriptor 5; it writes its events to 3 and reads a hand-off from 4
// when its order says --handoff-fd 4. A call starts one and orders it at once, or takes the one
// the server started ahead (keepSpare), which has started and loaded its config already: 12 ms
// or so of an all-hit runTasks of 300 tasks.
type runChild struct {
	root string
	// key is the secret this child's hand-off carries (handoff.Order.Key): it goes down the
	// order's pipe, never through the command line or the environment, which /proc shows.
	key string
	// The server's ends of the pipes: the order written, the hand-off written, the events read.
	order, handoff, events *os.File
	stdout                 bytes.Buffer
	stderr                 *tailBuffer
	// stop ends the child: SIGTERM, the grace, then SIGKILL to everything it started.
	stop context.CancelFunc
	// done is closed once the child was reaped; res and err then say how it ended.
	done chan struct{}
	res  proc.Result
	err  error
}

// startRunChild starts a child in root, and answers once it started (or could not start).
func (d *Deps) startRunChild(root string) (*runChild, error) {
	if d.Exe == "" {
		return nil, errors.New("runTasks: the vx executable is unknown")
	}
	c := &runChild{root: root, key: rand.Text(), stderr: &tailBuffer{max: stderrTail}, done: make(chan struct{})}
	var theirs []*os.File
	for _, childReads := range []bool{false, true, true} {
		r, w, err := os.Pipe()
		if err != nil {
			closeFiles(theirs)
			c.closeOurs()
			return nil, fmt.Errorf("runTasks: a pipe for vx run: %w", err)
		}
		if childReads {
			theirs = append(theirs, r)
			if c.handoff == nil {
				c.handoff = w
			} else {
				c.order = w
			}
		} else {
			theirs, c.events = append(theirs, w), r
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	c.stop = stop
	started := make(chan struct{})
	go func() {
		defer close(c.done)
		defer stop()
		c.res, c.err = proc.Run(ctx, proc.Spec{
			Path: d.Exe, Args: []string{handoff.AwaitRunArg, fmt.Sprint(childOrderFD)}, Dir: root,
			Env:    d.environ(),
			Stdout: &c.stdout, Stderr: c.stderr,
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
		c.closeOurs()
		return nil, fmt.Errorf("runTasks: start vx run: %w", c.err)
	}
}

// closeOurs closes the server's ends of the child's pipes.
func (c *runChild) closeOurs() {
	closeFiles([]*os.File{c.order, c.handoff, c.events})
}

// exited reports whether the child has ended.
func (c *runChild) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// discard ends a child that was given no order: with the order's pipe closed empty it ends on
// its own, and the stop covers one still loading its config. It waits for the child.
func (c *runChild) discard() {
	c.order.Close()
	c.stop()
	<-c.done
	c.closeOurs()
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}

// spares is the runChild a server keeps started ahead of the next runTasks call.
type spares struct {
	mu       sync.Mutex
	child    *runChild
	starting bool
	closed   bool
	// starters are the goroutines starting one.
	starters sync.WaitGroup
}

// takeSpare answers the child kept for a call in root, nil for none; one of another folder or
// that has ended is let go.
func (d *Deps) takeSpare(root string) *runChild {
	d.spares.mu.Lock()
	c := d.spares.child
	d.spares.child = nil
	d.spares.mu.Unlock()
	if c == nil {
		return nil
	}
	if c.root != root || c.exited() {
		c.discard()
		return nil
	}
	return c
}

// keepSpare starts, in the background, the child that the next call in root takes, where the
// server keeps one (Spare) and none is kept or starting.
func (d *Deps) keepSpare(root string) {
	if !d.Spare {
		return
	}
	s := &d.spares
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.child != nil || s.starting {
		return
	}
	s.starting = true
	s.starters.Go(func() {
		c, err := d.startRunChild(root)
		s.mu.Lock()
		s.starting = false
		keep := err == nil && !s.closed && s.child == nil
		if keep {
			s.child = c
		}
		s.mu.Unlock()
		if err != nil {
			fmt.Fprintf(d.stderr(), "vx mcp: runTasks: %v\n", err)
		} else if !keep {
			c.discard()
		}
	})
}

// closeSpare ends the child kept for the next call, and any being started, and waits for them.
func (d *Deps) closeSpare() {
	s := &d.spares
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.starters.Wait()
	s.mu.Lock()
	c := s.child
	s.child = nil
	s.mu.Unlock()
	if c != nil {
		c.discard()
	}
}

// writeHandoff makes the hand-off (handoff, nil for none) and writes it to w, the child's
// hand-off pipe (grown as large as the system allows, for the snapshot), in a goroutine, while the
// child reads its order and loads its config (it reads the hand-off when it needs the file state):
// the server's part is off the call's path. It closes w once written; where the hand-off turns
// out to be nothing, w is closed empty and the child asks the watcher, as without one. It answers
// what waits for the writer, which ends once the child has read the hand-off or closed its end
// by exiting.
func (d *Deps) writeHandoff(w *os.File, key string, makeHandoff func() *handoff.Handoff) (wrote func()) {
	if makeHandoff == nil {
		w.Close()
		return func() {}
	}
	var writer sync.WaitGroup
	writer.Go(func() {
		defer w.Close()
		h := makeHandoff()
		if h == nil {
			return
		}
		h.Key = key
		growPipe(w, h.SizeHint())
		if err := handoff.Write(w, h); err != nil && !errors.Is(err, syscall.EPIPE) {
			fmt.Fprintf(d.stderr(), "vx mcp: runTasks: %v\n", err)
		}
	})
	return writer.Wait
}

// runChild runs `vx run` for args in root, in the child kept for the call or one it starts, handed
// what handoff makes meanwhile (nil: nothing), turns its events into progress (none when nil), and
// answers its summary or its refusal. Whatever happens, every process the run started is gone when
// it returns; a child for the next call is started then (keepSpare).
func (d *Deps) runChild(ctx context.Context, root string, args *runTasksArgs, makeHandoff func() *handoff.Handoff, progress func(done, total float64, msg string)) (*RunAnswer, error) {
	c := d.takeSpare(root)
	if c == nil {
		var err error
		if c, err = d.startRunChild(root); err != nil {
			return nil, err
		}
	}
	defer d.keepSpare(root)
	defer c.closeOurs()
	// A cancelled call stops the child: SIGTERM, the grace, SIGKILL to its tree.
	defer context.AfterFunc(ctx, c.stop)()

	marker := callMarkerPrefix + rand.Text() + "=1"
	events := readChildEvents(c.events, progress)
	wrote := d.writeHandoff(c.handoff, c.key, makeHandoff)
	defer wrote()
	// A child that died before it read its order says so by how it ended, below.
	if err := writeOrder(c.order, handoff.Order{Args: args.childArgs(makeHandoff != nil), Env: []string{marker}, Key: c.key}); err != nil &&
		!errors.Is(err, syscall.EPIPE) {
		fmt.Fprintf(d.stderr(), "vx mcp: runTasks: %v\n", err)
	}
	<-c.done
	// The child's last events are all read once it exited; past eventsDrain, a process that
	// escaped holds the pipe, and the sweep below ends it.
	drained := false
	select {
	case <-events.read:
		drained = true
	case <-time.After(eventsDrain):
	}
	// Each task's supervisor reaps what its task left; the sweep finds what is left when a
	// supervisor or the child itself was SIGKILLed. A child that ended on its own saying it
	// started no command (a full hit) left nothing to find.
	if !drained || ctx.Err() != nil || c.res.Signal != "" || events.commands == nil || *events.commands != 0 {
		if err := proc.KillMarked(marker, sweepTimeout); err != nil {
			fmt.Fprintf(d.stderr(), "vx mcp: runTasks: %v\n", err)
		}
	}
	c.events.Close()
	<-events.read

	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case c.err != nil:
		return nil, fmt.Errorf("runTasks: %w", c.err)
	}
	msg := events.msg
	if msg == "" {
		// A child that died before it could say why (a panic, a flag it did not take) left its
		// last words on stderr, if any.
		msg = lastMessage(c.stderr.Bytes())
	}
	return d.answer(c.res, c.stdout.Bytes(), msg)
}

// writeOrder writes the child's order to w, and closes w.
func writeOrder(w *os.File, order handoff.Order) error {
	data, err := json.Marshal(order)
	if err != nil {
		w.Close()
		return fmt.Errorf("the order of vx run: %w", err)
	}
	_, err = w.Write(data)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("the order of vx run: %w", err)
	}
	return nil
}

// childEvents is what the child's events said: the message of its error event, and what its
// end event says of the commands it started. Both are read only once read is closed.
type childEvents struct {
	msg      string
	commands *int64
	read     chan struct{}
}

// readChildEvents reads the child's events from r until EOF, turning them into progress (none
// when nil), in a goroutine its caller waits for on read.
func readChildEvents(r io.Reader, progress func(done, total float64, msg string)) *childEvents {
	readEvents := runout.ReadEvents
	if progress == nil {
		// No progress to send: the task lines, one a task, are skipped unread.
		readEvents, progress = runout.ReadEventsButTasks, func(float64, float64, string) {}
	}
	ev := &childEvents{read: make(chan struct{})}
	go func() {
		defer close(ev.read)
		readEvents(r, func(e runout.Event) {
			switch e.Type {
			case runout.EventStart:
				progress(0, float64(e.Total), fmt.Sprintf("run %s started: %d tasks", e.RunID, e.Total))
			case runout.EventTask:
				progress(float64(e.Done), float64(e.Total), taskMessage(e))
			case runout.EventError:
				ev.msg = e.Message
			case runout.EventEnd:
				ev.commands = e.Commands
			}
		})
	}()
	return ev
}
