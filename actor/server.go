package actor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/sourcegraph/conc"
	"github.com/sourcegraph/conc/pool"

	"github.com/vzn/vx/tools"
)

// Config is what Serve needs.
type Config struct {
	// In is the request stream (stdin). When ctx ends, a pending read must be
	// stopped: a blocking *os.File (a pipe, socket or terminal) is read through a
	// non-blocking duplicate whose read deadline can end it, another reader
	// through its SetReadDeadline or Close; a reader with neither must end by
	// itself before Serve returns.
	In io.Reader
	// Out is the reply stream: after GuardStdout, the duplicate of fd 1. Only
	// the server's writer goroutine writes to it.
	Out io.Writer
	// Logger receives one debug line per request (method, id, duration,
	// outcome) and the server's warnings; it must not write to Out.
	Logger zerolog.Logger
	// Tools are the tools listed and called.
	Tools *tools.Registry
	// Workers is the size of the pool running tools/list and tools/call;
	// 0 means 2×NumCPU, at least 4.
	Workers int
	// Mask masks secret values in error texts; nil leaves them as they are.
	Mask func(string) string
	// ServerName and ServerVersion are the serverInfo the server reports.
	ServerName, ServerVersion string
	// MaxLineBytes is the longest frame read, newline excluded; a longer line is
	// answered with -32600 and skipped. 0 means DefaultMaxLineBytes.
	MaxLineBytes int
	// ToolsPageSize is how many tools one tools/list page holds; 0 lists all
	// on one page.
	ToolsPageSize int
}

// shutdownFlushTimeout bounds how long the writer may block flushing the last
// replies to a client that stopped reading, where Out supports write deadlines.
const shutdownFlushTimeout = 5 * time.Second

// errShutdown is the cause every request context is cancelled with at shutdown.
var errShutdown = errors.New("actor: server shutting down")

// server is one Serve: a reader goroutine, a dispatcher feeding a bounded
// pool, and a writer goroutine, around one in-flight state.
type server struct {
	log      zerolog.Logger
	registry *tools.Registry
	mask     func(string) string
	info     implementation
	workers  int
	maxLine  int
	pageSize int
	out      io.Writer

	base context.Context // parent of every request's context; cancelled at shutdown
	stop context.CancelCauseFunc

	work    *queue[*call]  // requests for the pool, in arrival order
	replies *queue[outMsg] // lines for the writer, in the order they must go out

	mu sync.Mutex
	st state // guarded by mu; changed only inside update
}

// state is all the server's mutable state.
type state struct {
	// calls holds every request bound for the pool, from its arrival until its
	// reply is handed to the writer (claimed) or dropped.
	calls map[string]*call
	// revision is the revision initialize negotiated; "" before any.
	revision string
	// writeErr is the first error writing Out; the stream is broken after it.
	writeErr error
}

// update runs f with the state locked: the one place state changes.
func (s *server) update(f func(st *state)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.st)
}

// call is one request run by the pool. Its fields below the line are guarded by
// server.mu and changed only inside update.
type call struct {
	id            json.RawMessage
	key           string
	method        string
	params        json.RawMessage
	revision      string
	progressToken json.RawMessage
	batch         *batch
	ctx           context.Context
	cancel        context.CancelFunc
	start         time.Time

	cancelled    bool    // by notifications/cancelled or shutdown: no reply, no progress
	finished     bool    // the handler returned: no more progress
	progress     float64 // the last progress sent
	progressSent bool
}

// batch gathers the replies of one JSON array of requests. Guarded by server.mu.
type batch struct {
	pending int       // requests still running
	sealed  bool      // every element has been read
	items   []outItem // replies so far
}

// outItem is one reply or notification for the writer. A reply tied to a call
// is dropped if the call is cancelled before the writer claims it.
type outItem struct {
	data  []byte
	c     *call // nil for replies not tied to a registered call
	reply bool  // the call's reply (claiming it ends the call), not a notification
}

// outMsg is one line for the writer: an item, or a batch's array of items.
type outMsg struct {
	items []outItem
	batch bool
}

// Serve runs the server until In reaches EOF or ctx ends. On EOF it stops
// reading, cancels every request still running (a cancelled request gets no
// reply), waits for the workers, flushes the replies already made and returns
// nil. When ctx ends (SIGTERM, SIGINT) it does the same and returns ctx.Err();
// when writing Out fails (a broken pipe) it does the same and returns that error.
func Serve(ctx context.Context, cfg Config) error {
	if cfg.In == nil || cfg.Out == nil || cfg.Tools == nil {
		return errors.New("actor.Serve: In, Out and Tools are required")
	}
	s := newServer(cfg)
	in, interrupt, release := interruptible(cfg.In)
	defer release()

	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	s.base, s.stop = runCtx, stop

	var wg conc.WaitGroup
	readDone := make(chan error, 1)
	dispatched := make(chan struct{})
	wg.Go(s.writeLoop)
	wg.Go(func() {
		defer close(dispatched)
		s.dispatchLoop()
	})
	wg.Go(func() {
		err := errors.New("actor: reader panicked")
		defer func() { readDone <- err }()
		err = s.readLoop(newFrameReader(in, s.maxLine))
	})

	var readErr error
	interrupted := false
	select {
	case readErr = <-readDone:
	case <-runCtx.Done():
		if interrupt != nil {
			interrupt()
			interrupted = true
		}
		readErr = <-readDone // without interrupt, In must end by itself
	}
	s.log.Debug().Msg("mcp server shutting down")
	stop(errShutdown)
	s.cancelAll()
	s.work.close()
	<-dispatched // every call has finished: no more replies
	s.replies.close()
	if d, ok := cfg.Out.(interface{ SetWriteDeadline(time.Time) error }); ok {
		_ = d.SetWriteDeadline(time.Now().Add(shutdownFlushTimeout))
		defer d.SetWriteDeadline(time.Time{})
	}
	wg.Wait()

	var writeErr error
	s.update(func(st *state) { writeErr = st.writeErr })
	switch {
	case writeErr != nil:
		return fmt.Errorf("actor: writing replies: %w", writeErr)
	case ctx.Err() != nil:
		return ctx.Err()
	case readErr != nil && !interrupted:
		return fmt.Errorf("actor: reading requests: %w", readErr)
	}
	return nil
}

func newServer(cfg Config) *server {
	s := &server{
		log:      cfg.Logger,
		registry: cfg.Tools,
		mask:     cfg.Mask,
		info:     implementation{Name: cfg.ServerName, Version: cfg.ServerVersion},
		workers:  cfg.Workers,
		maxLine:  cfg.MaxLineBytes,
		pageSize: cfg.ToolsPageSize,
		out:      cfg.Out,
		work:     newQueue[*call](),
		replies:  newQueue[outMsg](),
		st:       state{calls: map[string]*call{}},
	}
	if s.mask == nil {
		s.mask = func(v string) string { return v }
	}
	if s.info.Name == "" {
		s.info.Name = "vx"
	}
	if s.info.Version == "" {
		s.info.Version = "dev"
	}
	if s.workers <= 0 {
		s.workers = max(4, 2*runtime.NumCPU())
	}
	if s.maxLine <= 0 {
		s.maxLine = DefaultMaxLineBytes
	}
	return s
}

// cancelAll cancels every request still running; replies already made stay
// queued and are flushed.
func (s *server) cancelAll() {
	s.update(func(st *state) {
		for _, c := range st.calls {
			if !c.finished && !c.cancelled {
				c.cancelled = true
				c.cancel()
			}
		}
	})
}

// send queues one line for the writer.
func (s *server) send(items ...outItem) {
	s.replies.push(outMsg{items: items})
}

// readLoop reads frames until In ends, handling each at once: control messages
// (ping, notifications/cancelled, initialize, server/discover) are answered by
// the reader itself, requests go to the pool's queue. It never blocks on the
// pool or the writer.
func (s *server) readLoop(fr *frameReader) error {
	for {
		line, err := fr.next()
		if err != nil {
			var long *frameTooLongError
			if errors.As(err, &long) {
				s.log.Warn().Int64("bytes", long.size).Msg("mcp frame too long: skipped")
				s.send(outItem{data: appendError(nil, long.id, wireError(fmt.Errorf("%w: %v", ErrInvalidRequest, long), s.mask))})
				continue
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		s.handleFrame(line)
	}
}

// handleFrame handles one line: a message, a batch, or something to refuse.
func (s *server) handleFrame(line []byte) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error().Str("panic", s.mask(fmt.Sprint(r))).Str("stack", string(debug.Stack())).Msg("mcp frame handling panicked")
			s.send(outItem{data: appendError(nil, nil, wireError(fmt.Errorf("%w: %v", ErrInternal, r), s.mask))})
		}
	}()
	switch {
	case blank(line): // between frames
	case firstByte(line) == '[':
		s.handleBatch(line)
	default:
		if item, ok := s.handleMessage(line, nil); ok {
			s.send(item)
		}
	}
}

// handleBatch fans a JSON array of messages out and answers it as one array.
func (s *server) handleBatch(line []byte) {
	var elems []json.RawMessage
	if err := json.Unmarshal(line, &elems); err != nil {
		s.send(outItem{data: appendError(nil, nil, wireError(fmt.Errorf("%w: not JSON", ErrParse), s.mask))})
		return
	}
	if len(elems) == 0 {
		s.send(outItem{data: appendError(nil, nil, wireError(fmt.Errorf("%w: empty batch", ErrInvalidRequest), s.mask))})
		return
	}
	b := &batch{}
	defer s.update(func(*state) { // deferred: a panic halfway must not strand the calls already queued
		b.sealed = true
		s.batchProgressed(b)
	})
	for _, elem := range elems {
		if item, ok := s.handleMessage(elem, b); ok {
			s.update(func(*state) { b.items = append(b.items, item) })
		}
	}
}

// batchProgressed queues b's array once it is sealed and nothing is pending.
// Called inside update.
func (s *server) batchProgressed(b *batch) {
	if !b.sealed || b.pending > 0 {
		return
	}
	if len(b.items) > 0 {
		s.replies.push(outMsg{items: b.items, batch: true})
	}
}

// handleMessage handles one message of a frame or batch b (nil outside a
// batch). It returns the reply to send now, or ok=false when there is none yet
// (a notification, or a request queued for the pool).
func (s *server) handleMessage(raw json.RawMessage, b *batch) (item outItem, ok bool) {
	start := time.Now()
	msg, id, err, isMsg := parseMessage(raw)
	if !isMsg {
		s.log.Debug().Msg("mcp ignored a response the server did not ask for")
		return outItem{}, false
	}
	if err != nil {
		s.logRequest("", id, start, err)
		return outItem{data: appendError(nil, id, wireError(err, s.mask))}, true
	}
	if msg.id == nil {
		s.handleNotification(msg)
		return outItem{}, false
	}
	reply := func(result any, err error) (outItem, bool) {
		s.logRequest(msg.method, msg.id, start, err)
		if err != nil {
			return outItem{data: appendError(nil, msg.id, wireError(err, s.mask))}, true
		}
		data, merr := json.Marshal(result)
		if merr != nil {
			return outItem{data: appendError(nil, msg.id, wireError(merr, s.mask))}, true
		}
		return outItem{data: appendResult(nil, msg.id, data)}, true
	}
	rev, progressToken, err := s.revisionOf(msg)
	if err != nil {
		return reply(nil, err)
	}
	switch msg.method {
	case "ping":
		return reply(emptyResult{s.statelessFor(rev)}, nil)
	case "initialize":
		return reply(s.initialize(msg.params))
	case "server/discover":
		return reply(discoverResult{
			SupportedVersions: SupportedRevisions(),
			cacheable:         cacheableFor(Rev20260728),
			stateless:         s.statelessFor(Rev20260728),
		}, nil)
	case "tools/list", "tools/call":
		// A handshake revision serves the tools only once initialize was answered; a
		// stateless request names its revision itself and needs none.
		if rev == "" {
			return reply(nil, fmt.Errorf("%w: %s before initialize (send initialize first, or name protocol version %s in params._meta)",
				ErrInvalidRequest, msg.method, Rev20260728))
		}
	default:
		return reply(nil, fmt.Errorf("%w: %q", ErrMethodNotFound, msg.method))
	}

	c := &call{
		id: msg.id, key: idKey(msg.id), method: msg.method, params: msg.params,
		revision: rev, progressToken: progressToken, batch: b, start: start,
	}
	c.ctx, c.cancel = context.WithCancel(s.base)
	dup := false
	s.update(func(st *state) {
		if _, dup = st.calls[c.key]; dup {
			return
		}
		st.calls[c.key] = c
		if b != nil {
			b.pending++
		}
	})
	if dup {
		c.cancel()
		return reply(nil, fmt.Errorf("%w: request id %s is already in flight", ErrInvalidRequest, msg.id))
	}
	s.work.push(c)
	return outItem{}, false
}

// revisionOf returns the revision a request is made under: the one its _meta
// names (the stateless revision), else the one initialize negotiated, else ""
// (no handshake yet). It also returns the request's progress token.
func (s *server) revisionOf(msg message) (rev string, progressToken json.RawMessage, err error) {
	version, progressToken := readMeta(msg.params)
	switch {
	case version == Rev20260728:
		return version, progressToken, nil
	case version > Rev20260728:
		return "", nil, unsupportedRevision(version)
	}
	s.update(func(st *state) { rev = st.revision })
	return rev, progressToken, nil
}

// handleNotification handles a message without id: no reply, ever.
func (s *server) handleNotification(msg message) {
	switch msg.method {
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if firstByte(msg.params) != '{' || json.Unmarshal(msg.params, &p) != nil || !validID(p.RequestID) {
			s.log.Debug().Msg("mcp notifications/cancelled without a valid requestId ignored")
			return
		}
		key := idKey(p.RequestID)
		found := false
		s.update(func(st *state) {
			c := st.calls[key]
			if c == nil || c.cancelled {
				return
			}
			found = true
			c.cancelled = true
			c.cancel()
		})
		s.log.Debug().RawJSON("id", p.RequestID).Bool("inFlight", found).Msg("mcp cancel")
	default: // notifications/initialized and anything else the server does not act on
		s.log.Debug().Str("method", msg.method).Msg("mcp notification")
	}
}

// initialize negotiates the revision and describes the server.
func (s *server) initialize(params json.RawMessage) (any, error) {
	var p struct {
		ProtocolVersion json.RawMessage `json:"protocolVersion"`
	}
	if params != nil {
		if firstByte(params) != '{' {
			return nil, fmt.Errorf("%w: initialize params must be an object", ErrInvalidParams)
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidParams, err)
		}
	}
	var asked string
	if p.ProtocolVersion != nil && json.Unmarshal(p.ProtocolVersion, &asked) != nil {
		return nil, fmt.Errorf("%w: protocolVersion must be a string", ErrInvalidParams)
	}
	rev := negotiate(asked)
	s.update(func(st *state) { st.revision = rev })
	res := initializeResult{ProtocolVersion: rev, ServerInfo: s.info}
	return res, nil
}

// dispatchLoop feeds queued calls to a bounded pool: it is the one that blocks
// when every worker is busy, never the reader. It returns once the queue is
// closed and every call has finished.
func (s *server) dispatchLoop() {
	p := pool.New().WithMaxGoroutines(s.workers)
	for {
		c, ok := s.work.pop()
		if !ok {
			break
		}
		p.Go(func() { s.run(c) })
	}
	p.Wait()
}

// run answers one call and hands its reply to the writer unless it was cancelled.
func (s *server) run(c *call) {
	var result any
	var err error
	if c.ctx.Err() == nil { // not cancelled while queued
		result, err = s.invoke(c)
	}
	var data []byte
	if err != nil {
		data = appendError(nil, c.id, wireError(err, s.mask))
	} else if result != nil {
		if js, merr := json.Marshal(result); merr != nil {
			err = fmt.Errorf("%w: encoding the result: %v", ErrInternal, merr)
			data = appendError(nil, c.id, wireError(err, s.mask))
		} else {
			data = appendResult(nil, c.id, js)
		}
	}
	cancelled := false
	s.update(func(st *state) {
		c.finished = true
		// The context ends only by a cancel: notifications/cancelled, or the
		// shutdown, which may reach it (through Serve's ctx) before cancelAll does.
		c.cancelled = c.cancelled || c.ctx.Err() != nil
		cancelled = c.cancelled
		if cancelled {
			if st.calls[c.key] == c {
				delete(st.calls, c.key)
			}
			if c.batch != nil {
				c.batch.pending--
				s.batchProgressed(c.batch)
			}
			return
		}
		item := outItem{data: data, c: c, reply: true}
		if c.batch == nil {
			s.replies.push(outMsg{items: []outItem{item}})
			return
		}
		c.batch.items = append(c.batch.items, item)
		c.batch.pending--
		s.batchProgressed(c.batch)
	})
	c.cancel()
	if cancelled {
		s.logOutcome(c.method, c.id, c.start, "cancelled")
		return
	}
	s.logRequest(c.method, c.id, c.start, err)
}

// invoke runs tools/list or tools/call, turning a panic into -32603.
func (s *server) invoke(c *call) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error().Str("panic", s.mask(fmt.Sprint(r))).Str("method", c.method).Str("stack", string(debug.Stack())).Msg("mcp request panicked")
			err = fmt.Errorf("%w: %s panicked: %v", ErrInternal, c.method, r)
		}
	}()
	if firstByte(c.params) == '[' {
		return nil, fmt.Errorf("%w: params must be an object", ErrInvalidParams)
	}
	if c.method == "tools/list" {
		return s.listTools(c)
	}
	return s.callTool(c)
}

// listTools answers tools/list, one page at a time when ToolsPageSize is set.
func (s *server) listTools(c *call) (any, error) {
	var p struct {
		Cursor json.RawMessage `json:"cursor"`
	}
	if c.params != nil {
		if err := json.Unmarshal(c.params, &p); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidParams, err)
		}
	}
	all := s.registry.List(c.ctx)
	from := 0
	if p.Cursor != nil {
		var cursor string
		if json.Unmarshal(p.Cursor, &cursor) != nil {
			return nil, fmt.Errorf("%w: cursor must be a string", ErrInvalidParams)
		}
		after, ok := decodeCursor(cursor)
		i := -1
		for j, t := range all {
			if t.Name == after {
				i = j
			}
		}
		if !ok || i < 0 {
			return nil, fmt.Errorf("%w: invalid cursor %q", ErrInvalidParams, cursor)
		}
		from = i + 1
	}
	to := len(all)
	if s.pageSize > 0 && from+s.pageSize < to {
		to = from + s.pageSize
	}
	res := listToolsResult{Tools: make([]toolWire, 0, to-from), cacheable: cacheableFor(c.revision), stateless: s.statelessFor(c.revision)}
	for _, t := range all[from:to] {
		res.Tools = append(res.Tools, wireTool(t, c.revision))
	}
	if to < len(all) {
		res.NextCursor = encodeCursor(all[to-1].Name)
	}
	return res, nil
}

// callTool answers tools/call: checks the name and arguments, runs the tool's
// handler, and turns its answer into a result (an isError one for its errors).
func (s *server) callTool(c *call) (any, error) {
	var p struct {
		Name      json.RawMessage `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if c.params == nil {
		return nil, fmt.Errorf("%w: tools/call needs params", ErrInvalidParams)
	}
	if err := json.Unmarshal(c.params, &p); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	var name string
	if firstByte(p.Name) != '"' || json.Unmarshal(p.Name, &name) != nil {
		return nil, fmt.Errorf("%w: params.name must be a string", ErrInvalidParams)
	}
	tool, ok := s.registry.Lookup(c.ctx, name)
	if !ok {
		return nil, fmt.Errorf("%w: unknown tool %q", ErrInvalidParams, name)
	}
	args := p.Arguments
	switch firstByte(args) {
	case 0:
		args = json.RawMessage("{}")
	case '{':
	default:
		return nil, fmt.Errorf("%w: arguments must be an object", ErrInvalidParams)
	}
	value, err := tool.Handler(c.ctx, &tools.Call{Args: args, Progress: s.progressFunc(c), ProtocolVersion: c.revision})
	res := callToolResult{stateless: s.statelessFor(c.revision)}
	if err != nil {
		if !tools.IsRefusal(err) {
			s.log.Debug().Str("tool", name).Str("error", s.mask(err.Error())).Msg("mcp tool failed")
		}
		res.IsError = true
		res.Content = []textContent{{Type: "text", Text: s.mask(err.Error())}}
		return res, nil
	}
	js, err := json.Marshal(value)
	if err != nil {
		return nil, fmt.Errorf("%w: encoding the answer of tool %q: %v", ErrInternal, name, err)
	}
	res.Content = []textContent{{Type: "text", Text: string(js)}}
	if hasStructured(c.revision) && (firstByte(js) == '{' || isStateless(c.revision)) {
		res.StructuredContent = js
	}
	return res, nil
}

// progressFunc returns the Call.Progress of c: notifications/progress for its
// token, strictly increasing, none once it finished or was cancelled.
func (s *server) progressFunc(c *call) func(done, total float64, message string) {
	if c.progressToken == nil {
		return func(float64, float64, string) {}
	}
	return func(done, total float64, message string) {
		if math.IsNaN(done) || math.IsInf(done, 0) {
			return
		}
		p := progressParams{ProgressToken: c.progressToken, Progress: done}
		if total > 0 && !math.IsInf(total, 0) {
			p.Total = &total
		}
		if hasProgressMessage(c.revision) {
			p.Message = s.mask(message)
		}
		params, err := json.Marshal(p)
		if err != nil {
			return
		}
		data := appendNotification(nil, "notifications/progress", params)
		s.update(func(*state) {
			if c.finished || c.cancelled || (c.progressSent && done <= c.progress) {
				return
			}
			c.progress, c.progressSent = done, true
			s.replies.push(outMsg{items: []outItem{{data: data, c: c}}})
		})
	}
}

// writeLoop owns Out: it writes each message as one line, flushing whenever the
// queue runs dry. A write error marks the stream broken and shuts the server down;
// the loop then drains the queue without writing until it is closed.
func (s *server) writeLoop() {
	w := newLineWriter(s.out)
	var msgs []outMsg
	var lines [][]byte
	broken := false
	for {
		var ok bool
		msgs, ok = s.replies.popAll(msgs)
		if !ok {
			break
		}
		for i := range msgs {
			asArray := msgs[i].batch
			lines = s.claim(msgs[i], lines[:0])
			msgs[i] = outMsg{} // let the replies be collected
			if len(lines) == 0 || broken {
				continue
			}
			if err := w.writeLine(lines, asArray); err != nil {
				broken = true
				s.brokenStream(err)
			}
		}
		if !broken {
			if err := w.flush(); err != nil {
				broken = true
				s.brokenStream(err)
			}
		}
	}
}

// claim returns the items of m still to be written: a reply or notification of a
// call cancelled since is dropped, and a call whose reply is claimed is done.
func (s *server) claim(m outMsg, dst [][]byte) [][]byte {
	s.update(func(st *state) {
		for _, it := range m.items {
			if c := it.c; c != nil {
				if it.reply && st.calls[c.key] == c {
					delete(st.calls, c.key) // the call is over, written or dropped
				}
				if c.cancelled {
					continue
				}
			}
			dst = append(dst, it.data)
		}
	})
	return dst
}

// brokenStream records the first write error and shuts the server down.
func (s *server) brokenStream(err error) {
	s.update(func(st *state) {
		if st.writeErr == nil {
			st.writeErr = err
		}
	})
	s.log.Warn().Err(err).Msg("mcp reply stream broken: shutting down")
	s.stop(fmt.Errorf("actor: reply stream broken: %w", err))
}

// logRequest writes the debug line of one request.
func (s *server) logRequest(method string, id json.RawMessage, start time.Time, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
		var e *Error
		if errors.As(err, &e) {
			outcome = fmt.Sprintf("error %d", e.Code)
		}
	}
	s.logOutcome(method, id, start, outcome)
}

func (s *server) logOutcome(method string, id json.RawMessage, start time.Time, outcome string) {
	ev := s.log.Debug()
	if ev == nil {
		return
	}
	if id != nil {
		ev = ev.RawJSON("id", id)
	}
	ev.Str("method", method).Dur("duration", time.Since(start)).Str("outcome", outcome).Msg("mcp request")
}

// lineWriter writes messages to the reply stream, one line each.
type lineWriter struct {
	w *bufio.Writer
}

func newLineWriter(w io.Writer) *lineWriter {
	return &lineWriter{w: bufio.NewWriterSize(w, 64<<10)}
}

// writeLine writes one line: the item, or the items as a JSON array.
func (lw *lineWriter) writeLine(items [][]byte, asArray bool) error {
	if asArray {
		lw.w.WriteByte('[')
	}
	for i, it := range items {
		if i > 0 {
			lw.w.WriteByte(',')
		}
		lw.w.Write(it)
	}
	if asArray {
		lw.w.WriteByte(']')
	}
	return lw.w.WriteByte('\n')
}

func (lw *lineWriter) flush() error { return lw.w.Flush() }
