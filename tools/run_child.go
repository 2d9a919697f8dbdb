package tools

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/vzn/vx/engine/handoff"
	"github.com/vzn/vx/engine/runout"
	"github.com/vzn/vx/proc"
)

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
// it returns; a child for the next call is started then (session.Session.KeepChild).
func (d *Deps) runChild(ctx context.Context, root string, args *runTasksArgs, makeHandoff func() *handoff.Handoff, progress func(done, total float64, msg string)) (*RunAnswer, error) {
	return d.runChildStarted(ctx, root, args, makeHandoff, progress, nil)
}

// runChildStarted is runChild telling started (when set) the run's id as soon as the child has one.
func (d *Deps) runChildStarted(ctx context.Context, root string, args *runTasksArgs, makeHandoff func() *handoff.Handoff, progress func(done, total float64, msg string), started func(runID string)) (*RunAnswer, error) {
	c := d.Session.TakeChild(root)
	if c == nil {
		var err error
		if c, err = d.Session.StartChild(root); err != nil {
			return nil, err
		}
	}
	defer d.Session.KeepChild(root)
	defer c.ClosePipes()
	// A cancelled call stops the child: SIGTERM, the grace, SIGKILL to its tree.
	defer context.AfterFunc(ctx, c.Stop)()

	marker := callMarkerPrefix + rand.Text() + "=1"
	events := readChildEvents(c.Events, progress, started)
	wrote := d.writeHandoff(c.Handoff, c.Key, makeHandoff)
	defer wrote()
	// A child that died before it read its order says so by how it ended, below.
	if err := writeOrder(c.Order, handoff.Order{Args: args.childArgs(makeHandoff != nil), Env: []string{marker}, Key: c.Key}); err != nil &&
		!errors.Is(err, syscall.EPIPE) {
		fmt.Fprintf(d.stderr(), "vx mcp: runTasks: %v\n", err)
	}
	<-c.Done()
	res, childErr := c.Result()
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
	if !drained || ctx.Err() != nil || res.Signal != "" || events.commands == nil || *events.commands != 0 {
		if err := proc.KillMarked(marker, sweepTimeout); err != nil {
			fmt.Fprintf(d.stderr(), "vx mcp: runTasks: %v\n", err)
		}
	}
	c.Events.Close()
	<-events.read

	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case childErr != nil:
		return nil, fmt.Errorf("runTasks: %w", childErr)
	}
	msg := events.msg
	if msg == "" {
		// A child that died before it could say why (a panic, a flag it did not take) left its
		// last words on stderr, if any.
		msg = lastMessage(c.StderrTail())
	}
	return d.answer(res, c.Stdout(), msg)
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

// halfway is a progress between at and the next whole task (a wait or a remote stage between two
// tasks' progress, which only increases); at itself when no such value is left, which the
// client's progress then drops as no increase.
func halfway(at float64) float64 {
	next := at + (math.Floor(at)+1-at)/2
	if next >= math.Floor(at)+1 {
		return at
	}
	return next
}

// readChildEvents reads the child's events from r until EOF, turning them into progress (none
// when nil) and telling started (when set) the run's id, in a goroutine its caller waits for on
// read.
func readChildEvents(r io.Reader, progress func(done, total float64, msg string), started func(runID string)) *childEvents {
	readEvents := runout.ReadEvents
	if progress == nil {
		// No progress to send: the task lines, one a task, are skipped unread.
		readEvents, progress = runout.ReadEventsButTasks, func(float64, float64, string) {}
	}
	ev := &childEvents{read: make(chan struct{})}
	go func() {
		defer close(ev.read)
		// at is the progress last sent and total the run's task count: a wait is sent between
		// two tasks' progress, which only increases.
		var at, total float64
		readEvents(r, func(e runout.Event) {
			switch e.Type {
			case runout.EventStart:
				if started != nil {
					started(e.RunID)
				}
				total = float64(e.Total)
				progress(0, total, fmt.Sprintf("run %s started: %d tasks", e.RunID, e.Total))
			case runout.EventWait:
				at = halfway(at)
				progress(at, total, e.TaskID+": "+e.Message)
			case runout.EventStage:
				at = halfway(at)
				progress(at, total, e.TaskID+" (remote: "+e.Message+")")
			case runout.EventTask:
				at = float64(e.Done)
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
