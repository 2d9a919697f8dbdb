package actor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/sourcegraph/conc/pool"
)

// handler is what a conn serves: the MCP session. The conn owns the frames, the
// ids, the pool, cancellation and the writer; the handler says what a request
// means.
type handler interface {
	// preempt sees each request on the reader, in order, before anything after
	// it is read. It answers the requests that must not wait behind work (p
	// nil), or says how to queue the request for the pool.
	preempt(msg message) (p *pooled, result any, err error)
	// handle answers a queued call on a worker, under c.ctx.
	handle(c *call) (any, error)
	// endTasks cancels, with cause, the work the handler runs beyond the calls (MCP tasks), and
	// waits for it to end: after it returns the handler sends nothing more.
	endTasks(cause error)
	// cancelTasks cancels that work without waiting (stdin's end).
	cancelTasks(cause error)
}

// pooled is what preempt says of a request the pool answers: the revision it is
// made under and its progress token.
type pooled struct {
	revision      string
	progressToken json.RawMessage
	caps          clientCaps
}

// readLoop reads frames until In ends, handling each at once: control messages
// (ping, notifications/cancelled, initialize, server/discover) are answered by
// the reader itself, requests go to the pool's queue. It never blocks on the
// pool or the writer.
func (cn *conn) readLoop(fr *frameReader) error {
	frames := 0
	for {
		line, err := fr.next()
		if err != nil {
			var long *frameTooLongError
			if errors.As(err, &long) {
				cn.log.Warn().Int64("bytes", long.size).Msg("mcp frame too long: skipped")
				cn.send(cn.errorItem(long.id, fmt.Errorf("%w: %v", ErrInvalidRequest, long)))
				continue
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		frames++
		if frames == 2 {
			cn.openGate() // the client read the first reply
		}
		sent := cn.sent.Load()
		cn.handleFrame(line)
		if frames == 1 && cn.sent.Load() == sent {
			// The reader queued no reply to the first frame: nothing to wait for.
			cn.openGate()
			cn.openGate()
		}
	}
}

// handleFrame handles one line: a message, a batch, or something to refuse.
func (cn *conn) handleFrame(line []byte) {
	defer func() {
		if r := recover(); r != nil {
			cn.log.Error().Str("panic", cn.mask(fmt.Sprint(r))).Str("stack", string(debug.Stack())).Msg("mcp frame handling panicked")
			cn.send(cn.errorItem(nil, fmt.Errorf("%w: %v", ErrInternal, r)))
		}
	}()
	switch {
	case blank(line): // between frames
	case firstByte(line) == '[':
		cn.handleBatch(line)
	default:
		if item, ok := cn.handleMessage(line, nil); ok {
			cn.send(item)
		}
	}
}

// handleBatch fans a JSON array of messages out and answers it as one array.
func (cn *conn) handleBatch(line []byte) {
	var elems []json.RawMessage
	if err := json.Unmarshal(line, &elems); err != nil {
		cn.send(cn.errorItem(nil, fmt.Errorf("%w: not JSON", ErrParse)))
		return
	}
	if len(elems) == 0 {
		cn.send(cn.errorItem(nil, fmt.Errorf("%w: empty batch", ErrInvalidRequest)))
		return
	}
	b := &batch{}
	// Deferred: a panic halfway must not strand the calls already queued.
	defer cn.update(func(st *state) { st.seal(b) })
	for _, elem := range elems {
		if item, ok := cn.handleMessage(elem, b); ok {
			cn.update(func(st *state) { st.add(b, item) })
		}
	}
}

// handleMessage handles one message of a frame or batch b (nil outside a
// batch). It returns the reply to send now, or ok=false when there is none yet
// (a notification, or a request queued for the pool).
func (cn *conn) handleMessage(raw json.RawMessage, b *batch) (item outItem, ok bool) {
	start := time.Now()
	msg, id, err, isMsg := parseMessage(raw)
	if !isMsg {
		if !cn.asked.deliver(raw) {
			cn.log.Debug().Msg("mcp ignored a response the server did not ask for")
		}
		return outItem{}, false
	}
	if err != nil {
		cn.logRequest("", id, start, err)
		return cn.errorItem(id, err), true
	}
	if msg.id == nil {
		cn.handleNotification(msg)
		return outItem{}, false
	}
	p, result, err := cn.handler.preempt(msg)
	if p == nil {
		cn.logRequest(msg.method, msg.id, start, err)
		return cn.replyItem(msg.id, result, err), true
	}
	c := &call{
		id: msg.id, key: idKey(msg.id), method: msg.method, params: msg.params,
		revision: p.revision, progressToken: p.progressToken, caps: p.caps, batch: b, start: start, conn: cn,
	}
	c.ctx, c.cancel = context.WithCancelCause(cn.base)
	registered := false
	cn.update(func(st *state) { registered = st.register(c) })
	if !registered {
		c.cancel(nil)
		err := fmt.Errorf("%w: request id %s is already in flight", ErrInvalidRequest, msg.id)
		cn.logRequest(msg.method, msg.id, start, err)
		return cn.errorItem(msg.id, err), true
	}
	cn.work.push(c)
	return outItem{}, false
}

// handleNotification handles a message without id: no reply, ever. The conn
// acts on notifications/cancelled itself, on the reader, so that a cancel never
// waits behind the work it cancels.
func (cn *conn) handleNotification(msg message) {
	if msg.method != "notifications/cancelled" {
		cn.log.Debug().Str("method", msg.method).Msg("mcp notification")
		return
	}
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if firstByte(msg.params) != '{' || json.Unmarshal(msg.params, &p) != nil || !validID(p.RequestID) {
		cn.log.Debug().Msg("mcp notifications/cancelled without a valid requestId ignored")
		return
	}
	found := false
	cn.update(func(st *state) { found = st.cancelID(idKey(p.RequestID), errCancelledByClient) })
	cn.log.Debug().RawJSON("id", p.RequestID).Bool("inFlight", found).Msg("mcp cancel")
}

// dispatchLoop feeds queued calls to a bounded pool: it is the one that blocks
// when every worker is busy, never the reader. It returns once the queue is
// closed and every call has finished.
func (cn *conn) dispatchLoop() {
	p := pool.New().WithMaxGoroutines(cn.workers)
	for {
		c, ok := cn.work.pop()
		if !ok {
			break
		}
		p.Go(func() { cn.run(c) })
	}
	p.Wait()
}

// run answers one call, unless it was cancelled while queued, and hands the
// reply to the writer unless it was cancelled meanwhile.
func (cn *conn) run(c *call) {
	started := false
	cn.update(func(st *state) { started = st.start(c) })
	var reply []byte
	var err error
	if started {
		var result any
		result, err = cn.invoke(c)
		if se, ok := result.(selfEncoding); ok && err == nil {
			reply = cn.buffers.Get(se.size() + 64)
			reply = append(se.appendJSON(appendResultHead(reply, c.id)), '}')
			se.done(&cn.buffers)
		} else if err == nil {
			if js, merr := json.Marshal(result); merr != nil {
				err = fmt.Errorf("%w: encoding the result: %v", ErrInternal, merr)
			} else {
				reply = appendResult(nil, c.id, js)
			}
		}
		if err != nil {
			reply = appendError(nil, c.id, wireError(err, cn.mask))
		}
	}
	answered := false
	cn.update(func(st *state) { answered = st.finish(c, reply) })
	if !answered {
		cn.logCancelled(c)
	} else {
		cn.logRequest(c.method, c.id, c.start, err)
	}
	c.cancel(nil)
}

// invoke runs the handler, turning a panic into -32603.
func (cn *conn) invoke(c *call) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			cn.log.Error().Str("panic", cn.mask(fmt.Sprint(r))).Str("method", c.method).Str("stack", string(debug.Stack())).Msg("mcp request panicked")
			err = fmt.Errorf("%w: %s panicked: %v", ErrInternal, c.method, r)
		}
	}()
	return cn.handler.handle(c)
}

// enterTool tells the conn that c is about to run a tool, read-only or not; false
// means c was cancelled and the tool must not run (see state.enterTool).
func (c *call) enterTool(readOnly bool) (ok bool) {
	c.conn.update(func(st *state) { ok = st.enterTool(c, readOnly) })
	return ok
}

// notify sends a progress notification of c, data being the whole line, if c is
// still running and done exceeds its last progress (see state.notify).
func (c *call) notify(done float64, data []byte) {
	c.conn.update(func(st *state) { st.notify(c, done, data) })
}

// replyItem is the reply to a request answered with result or err.
func (cn *conn) replyItem(id json.RawMessage, result any, err error) outItem {
	if err != nil {
		return cn.errorItem(id, err)
	}
	data, err := json.Marshal(result)
	if err != nil {
		return cn.errorItem(id, err)
	}
	return outItem{data: appendResult(nil, id, data)}
}

// errorItem is the error reply err makes, its text masked.
func (cn *conn) errorItem(id json.RawMessage, err error) outItem {
	return outItem{data: appendError(nil, id, wireError(err, cn.mask))}
}

// logRequest writes the debug line of one request.
func (cn *conn) logRequest(method string, id json.RawMessage, start time.Time, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
		var e *Error
		if errors.As(err, &e) {
			outcome = fmt.Sprintf("error %d", e.Code)
		}
	}
	cn.logOutcome(method, id, start, outcome, nil)
}

// logCancelled writes the debug line of a call cancelled before it was answered,
// with what cancelled it: the client, stdin's end, a signal, a broken reply stream.
func (cn *conn) logCancelled(c *call) {
	cn.logOutcome(c.method, c.id, c.start, "cancelled", context.Cause(c.ctx))
}

func (cn *conn) logOutcome(method string, id json.RawMessage, start time.Time, outcome string, cause error) {
	ev := cn.log.Debug()
	if ev == nil {
		return
	}
	if id != nil {
		ev = ev.RawJSON("id", id)
	}
	if cause != nil {
		ev = ev.Str("cause", cn.mask(cause.Error()))
	}
	ev.Str("method", method).Dur("duration", time.Since(start)).Str("outcome", outcome).Msg("mcp request")
}
