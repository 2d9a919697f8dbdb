package actor

import (
	"context"
	"encoding/json"
	"time"
)

// state is all the mutable state of a connection: the calls in flight, their batches, and how the
// connection is ending. It is guarded by conn.mu and changed only inside conn.update, by the
// transitions below; each keeps one invariant.
type state struct {
	// calls holds every call from register until retire: while a call is in it, its id is taken.
	calls map[string]*call
	// eof is the cause calls are cancelled with once stdin has ended; nil before.
	eof error
	// writeErr is the first error writing Out; the stream is broken after it.
	writeErr error
	// out is the writer's queue. Transitions push to it while the state is locked, so that a
	// call's progress goes out before its reply and nothing of it after it was cancelled.
	out *queue[outMsg]
	// observe, when set (tests only), sees every transition of a call as it happens, with the
	// state locked: it must return at once and not call into the connection.
	observe func(callEvent)
}

func newState(out *queue[outMsg], observe func(callEvent)) state {
	return state{calls: map[string]*call{}, out: out, observe: observe}
}

// phase is where a call is in its life:
//
//	register → queued ─start→ running ─finish→ answered ─claim→ done (reply written)
//	             │               │                 │
//	           cancel          cancel            cancel
//	             ↓               ↓                 ↓
//	           cancelled ──finish──→ done        withdrawn ─claim→ done (reply dropped)
//
// A call whose context ended with the server's (a signal, a broken reply stream) is cancelled too.
// A cancelled call is never answered and sends no progress; it keeps its id until its handler
// has returned, so a client cannot reuse the id of work still running.
type phase uint8

const (
	queued    phase = iota // registered, waiting for a worker
	running                // a worker runs its handler
	cancelled              // cancelled before its handler returned
	answered               // the handler returned; the reply waits for the writer
	withdrawn              // cancelled after it answered: the writer drops the reply
	done                   // out of the table
)

func (p phase) String() string {
	return [...]string{"queued", "running", "cancelled", "answered", "withdrawn", "done"}[p]
}

// call is one request run by the pool. The fields below the line are guarded by conn.mu and
// changed only by state's transitions.
type call struct {
	id            json.RawMessage
	key           string // idKey(id)
	method        string
	params        json.RawMessage
	revision      string // the MCP revision it is made under
	progressToken json.RawMessage
	caps          clientCaps // what its client declared
	batch         *batch     // nil outside a batch
	ctx           context.Context
	cancel        context.CancelCauseFunc
	start         time.Time
	conn          *conn

	phase        phase
	sideEffects  bool    // its tool is not read-only: stdin's end cancels it at once
	progress     float64 // the last progress sent
	progressSent bool
}

// batch gathers the replies of one JSON array of requests into one line.
type batch struct {
	pending int       // calls registered and not finished
	sealed  bool      // every element has been read
	sent    bool      // its line went to the writer
	items   []outItem // replies so far
}

// callEvent is one transition of a call, for tests to synchronise on.
type callEvent struct {
	id    string
	phase phase
}

func (st *state) moved(c *call, to phase) {
	c.phase = to
	if st.observe != nil {
		st.observe(callEvent{id: string(c.id), phase: to})
	}
}

// register takes c's id for it and queues it. It reports false, changing nothing, when a call in
// flight holds the id.
func (st *state) register(c *call) bool {
	if _, dup := st.calls[c.key]; dup {
		return false
	}
	st.calls[c.key] = c
	if c.batch != nil {
		c.batch.pending++
	}
	st.moved(c, queued)
	return true
}

// start moves c to running as a worker picks it up. It reports false when c must not run: it was
// cancelled while queued, or its context ended with the server.
func (st *state) start(c *call) bool {
	if c.phase != queued || c.ctx.Err() != nil {
		return false
	}
	st.moved(c, running)
	return true
}

// cancel cancels c with cause. A queued or running call is cancelled: its context ends, it will not
// be answered and sends no more progress. An answered call whose reply the writer has not claimed
// yet is withdrawn: the reply is dropped. It reports whether c was in either case.
func (st *state) cancel(c *call, cause error) bool {
	switch c.phase {
	case queued, running:
		c.cancel(cause)
		st.moved(c, cancelled)
	case answered:
		st.moved(c, withdrawn)
	default:
		return false
	}
	return true
}

// cancelID cancels the call holding the id key (notifications/cancelled), if any.
func (st *state) cancelID(key string, cause error) bool {
	c := st.calls[key]
	return c != nil && st.cancel(c, cause)
}

// cancelAll cancels every call not answered yet; the replies already made are still written.
func (st *state) cancelAll(cause error) {
	for _, c := range st.calls {
		if c.phase == queued || c.phase == running {
			st.cancel(c, cause)
		}
	}
}

// stdinClosed records that stdin has ended, cause being what calls are cancelled with from now on.
// The calls already read may still be answered, but a tool that is not read-only (runTasks, whose
// children must not outlive the client) is cancelled at once, and enterTool starts no more of them.
func (st *state) stdinClosed(cause error) {
	st.eof = cause
	for _, c := range st.calls {
		if c.phase == running && c.sideEffects {
			st.cancel(c, cause)
		}
	}
}

// enterTool records, as c is about to run its tool's handler, whether the tool is read-only. Once
// stdin has ended, a tool that is not is cancelled instead of started, and enterTool reports false.
func (st *state) enterTool(c *call, readOnly bool) bool {
	if c.phase != running {
		return false
	}
	c.sideEffects = !readOnly
	if st.eof != nil && c.sideEffects {
		st.cancel(c, st.eof)
		return false
	}
	return true
}

// notify queues a progress notification of c, data being the whole line. It reports false, queueing
// nothing, when c is not running (not started, cancelled, or its handler returned) or done does
// not exceed the progress c last sent: progress only increases.
func (st *state) notify(c *call, done float64, data []byte) bool {
	if c.phase != running || (c.progressSent && done <= c.progress) {
		return false
	}
	c.progress, c.progressSent = done, true
	st.out.push(outMsg{items: []outItem{{data: data, c: c}}})
	return true
}

// finish ends c's run with reply, its reply line. A running call whose context is still live is
// answered: the reply goes to the writer, or to its batch, and the call keeps its id until the
// writer claims the reply. Any other call — cancelled, or whose context ended with the server — is
// retired with no reply. It reports whether c was answered.
func (st *state) finish(c *call, reply []byte) bool {
	ok := c.phase == running && c.ctx.Err() == nil
	if ok {
		st.moved(c, answered)
		item := outItem{data: reply, c: c, reply: true}
		if c.batch == nil {
			st.out.push(outMsg{items: []outItem{item}})
		} else {
			c.batch.items = append(c.batch.items, item)
		}
	} else {
		if c.phase == queued || c.phase == running { // its context ended with the server's
			st.moved(c, cancelled)
		}
		st.retire(c)
	}
	if c.batch != nil {
		c.batch.pending--
		st.flush(c.batch)
	}
	return ok
}

// claim reports whether it still goes out as the writer takes it. A call's reply goes out unless
// the call was withdrawn, and claiming it retires the call either way, freeing its id. A progress
// notification goes out while its call was not cancelled.
func (st *state) claim(it outItem) bool {
	c := it.c
	switch {
	case c == nil:
		return true
	case !it.reply:
		return c.phase == running || c.phase == answered
	}
	write := c.phase == answered
	st.retire(c)
	return write
}

// retire takes c out of the table: its id is free again.
func (st *state) retire(c *call) {
	if st.calls[c.key] == c {
		delete(st.calls, c.key)
	}
	st.moved(c, done)
}

// add adds a reply made on the reader to b.
func (st *state) add(b *batch, it outItem) {
	b.items = append(b.items, it)
}

// seal marks every element of b read.
func (st *state) seal(b *batch) {
	b.sealed = true
	st.flush(b)
}

// flush queues b's array once it is sealed and none of its calls is pending, once. A batch without
// replies (only notifications, or every call cancelled) gets no line.
func (st *state) flush(b *batch) {
	if !b.sealed || b.pending > 0 || b.sent {
		return
	}
	b.sent = true
	if len(b.items) > 0 {
		st.out.push(outMsg{items: b.items, batch: true})
	}
}
