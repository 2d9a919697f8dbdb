package runner

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vzn/vx/engine/executor"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/logtext"
	"github.com/vzn/vx/engine/store"
)

// A persistent task with readyWhen releases its dependents only once it is ready: a line of its
// output holds readyWhen.log, or localhost accepts a connection on readyWhen.port. Its gate
// (readyGate) watches both beside the command, in one goroutine the attempt owns and waits for;
// past readyWhen.timeout the gate stops the command and the task ends failed and notReady, which
// blocks its dependents.

// Readiness states of a gate: it waits, it saw a condition hold, or its timeout ran out first.
const (
	gateWaiting int32 = iota
	gateReady
	gateTimedOut
)

// portPollEvery is how often the gate tries readyWhen.port; dialTimeout bounds one try.
const (
	portPollEvery = 50 * time.Millisecond
	dialTimeout   = time.Second
)

// maxReadyLine bounds the part of a line without a newline the gate keeps to match against.
const maxReadyLine = 64 << 10

// readyGate is one persistent task's readiness: what it watches for, and what it found.
type readyGate struct {
	spec  *graph.ReadyWhen
	state atomic.Int32
	// logSeen is closed once a line of the output held spec.Log.
	logSeen  chan struct{}
	seenOnce sync.Once
	// line is the output's last line so far (no newline yet); only Write touches it.
	line []byte
}

func newReadyGate(spec *graph.ReadyWhen) *readyGate {
	return &readyGate{spec: spec, logSeen: make(chan struct{})}
}

// see matches what the command printed against readyWhen.log, line by line, a line without a
// newline yet included; colours and other control sequences are removed first.
func (g *readyGate) see(p []byte) {
	if g.spec.Log == "" || g.state.Load() != gateWaiting {
		return
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		g.line = append(g.line, chunk...)
		if strings.Contains(logtext.Plain(string(g.line)), g.spec.Log) {
			g.seenOnce.Do(func() { close(g.logSeen) })
			g.line = nil
			return
		}
		if i < 0 {
			if len(g.line) > maxReadyLine {
				g.line = append(g.line[:0], g.line[len(g.line)-maxReadyLine:]...)
			}
			return
		}
		g.line, p = g.line[:0], p[i+1:]
	}
}

// await waits until the task is ready (then calls released), its timeout runs out (then it stops
// the command through stop), or ctx ends (the command ended, or the run was cancelled).
func (g *readyGate) await(ctx context.Context, stop context.CancelFunc, released func()) {
	timer := time.NewTimer(g.timeout())
	defer timer.Stop()
	var poll <-chan time.Time
	if g.spec.Port != 0 {
		ticker := time.NewTicker(portPollEvery)
		defer ticker.Stop()
		poll = ticker.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-g.logSeen:
		case <-poll:
			if !g.listening(ctx) {
				continue
			}
		case <-timer.C:
			if g.state.CompareAndSwap(gateWaiting, gateTimedOut) {
				stop()
			}
			return
		}
		if g.state.CompareAndSwap(gateWaiting, gateReady) {
			released()
		}
		return
	}
}

// timeout is how long the gate waits: readyWhen.timeout, else graph.DefaultReadyTimeout.
func (g *readyGate) timeout() time.Duration {
	if g.spec.Timeout > 0 {
		return g.spec.Timeout
	}
	return graph.DefaultReadyTimeout
}

// sawLog reports whether a line of the output held readyWhen.log: the task was ready, though
// the command may have ended before the gate said so.
func (g *readyGate) sawLog() bool {
	select {
	case <-g.logSeen:
		return true
	default:
		return false
	}
}

// listening reports whether localhost accepts a TCP connection on readyWhen.port.
func (g *readyGate) listening(ctx context.Context) bool {
	d := net.Dialer{Timeout: dialTimeout}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort("localhost", strconv.Itoa(g.spec.Port)))
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}

// conditions names what the gate waited for, for the not-ready line.
func (g *readyGate) conditions() string {
	var what []string
	if g.spec.Log != "" {
		what = append(what, fmt.Sprintf("no line of its output held %q", g.spec.Log))
	}
	if g.spec.Port != 0 {
		what = append(what, fmt.Sprintf("nothing accepted a connection on port %d", g.spec.Port))
	}
	return strings.Join(what, " and ")
}

// serve runs a persistent task's command: its dependents start beside it at once, or, with
// readyWhen, once its gate finds it ready.
func (a *attempt) serve(key string) outcome {
	release := func() { a.report(step{n: a.n, to: released, key: key}) }
	if a.t.ReadyWhen == nil {
		release()
		return a.run(key)
	}
	a.gate = newReadyGate(a.t.ReadyWhen)
	outer := a.ctx
	runCtx, stop := context.WithCancel(outer)
	defer stop()
	a.ctx = runCtx
	var gate sync.WaitGroup
	gate.Go(func() { a.gate.await(runCtx, stop, release) })
	o := a.run(key)
	stop()
	gate.Wait()
	a.ctx = outer
	return o
}

// gateVerdict ends a gated task that never became ready as failed and notReady, naming why, and
// answers the log with that line added; a task that was ready, or a run cancelled while it
// waited, keeps its status.
func (a *attempt) gateVerdict(log []byte) []byte {
	g, e := a.gate, &a.e
	if g == nil {
		return log
	}
	var msg string
	switch state := g.state.Load(); {
	case state == gateTimedOut:
		msg = fmt.Sprintf("vx: %s was not ready after %s (readyWhen): %s; vx stopped it\n", a.t.ID, g.timeout(), g.conditions())
	case state == gateWaiting && !g.sawLog() && (e.Status == store.StatusMiss || e.Status == store.StatusFailed):
		msg = fmt.Sprintf("vx: %s ended before it was ready (readyWhen): %s\n", a.t.ID, g.conditions())
	default:
		return log
	}
	e.Status, e.NotReady = store.StatusFailed, []string{a.t.ID}
	a.r.display.Replay(a.t.ID, []byte(msg))
	return append(log, msg...)
}

// output is the task's log writer, through its gate when it has one.
func (a *attempt) output(w taskLog) executor.LogWriter {
	if a.gate == nil {
		return w
	}
	return gatedLog{w, a.gate}
}

// gatedLog is a gated task's log writer: the gate sees each write before the display does.
type gatedLog struct {
	taskLog
	gate *readyGate
}

// Write shows p to the gate, then writes it to the task's output.
func (l gatedLog) Write(p []byte) (int, error) {
	l.gate.see(p)
	return l.taskLog.Write(p)
}
