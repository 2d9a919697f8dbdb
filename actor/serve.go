package actor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/sourcegraph/conc"

	"github.com/vzn/vx/actor/tool"
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
	Tools *tool.Registry
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
	// EOFGrace is how long the requests already read when In reaches EOF have to
	// be answered before they are cancelled; 0 means DefaultEOFGrace, a negative
	// value cancels them at once.
	EOFGrace time.Duration
	// Instructions is what the server asks every host to put before its model, in initialize
	// and server/discover; "" sends none.
	Instructions string
	// Tasks says the server runs the tools that allow it (tool.Tool.TaskSupport) as MCP tasks for
	// a client that declares tasks, and says so in initialize and server/discover.
	Tasks bool
	// AfterFirstFrame, when set, is called once the client has its first answer: when the reply
	// to the first frame (an initialize, server/discover or ping, which the reader answers) has
	// been written to Out and flushed, and the client has sent its next frame (after initialize,
	// notifications/initialized), which tells that it read the reply. Where the first frame gets
	// no reply from the reader (a tools/call, a notification), it is called once the reader has
	// handled it. It is the place to start work the server wants done early but not before its
	// first answer, so that the work never competes with the writer or with the client reading
	// that answer (docs/performance.md, "Exec → initialize against a bare Go SDK server"). It must
	// not block; what it starts is its caller's to wait for.
	AfterFirstFrame func()

	// observe is the tests' hook on every transition of a call (export_test.go).
	observe func(callEvent)
}

// DefaultEOFGrace is how long, after stdin's EOF, the requests already read have
// to be answered: a client that writes its requests and closes stdin (a pipe from
// printf) still gets the answers it can read, and one that closed stdin to stop
// the server waits no longer than this.
const DefaultEOFGrace = 2 * time.Second

// shutdownFlushTimeout bounds how long the writer may block flushing the last
// replies to a client that stopped reading, where Out supports write deadlines.
const shutdownFlushTimeout = 5 * time.Second

// Why a call's context was cancelled (context.Cause), besides the end of Serve's
// context (its own cause: a signal) and a broken reply stream.
var (
	errCancelledByClient = errors.New("actor: cancelled by the client (notifications/cancelled)")
	errStdinClosed       = errors.New("actor: stdin closed")
)

// conn is one JSON-RPC connection over a request stream and a reply stream: a
// reader goroutine, a dispatcher feeding a bounded pool, and a writer goroutine,
// around one state. What the requests mean is its handler's business.
type conn struct {
	log      zerolog.Logger
	mask     func(string) string
	handler  handler
	workers  int
	maxLine  int
	eofGrace time.Duration
	out      io.Writer

	// afterFirst is Config.AfterFirstFrame, run through openGate once both its gates are open:
	// the writer's first flush and the reader's next frame. sent counts the lines queued for the
	// writer, so that the reader can tell whether the first frame queued a reply.
	afterFirst      func()
	afterFirstGates atomic.Int32
	sent            atomic.Int64

	base context.Context // parent of every call's context; cancelled at shutdown
	stop context.CancelCauseFunc

	work    *queue[*call]  // calls for the pool, in arrival order
	replies *queue[outMsg] // lines for the writer, in the order they must go out

	// buffers keeps large answers' and replies' byte slices for the next ones (tool.Buffers).
	buffers tool.Buffers

	// asked holds the requests the server sent the client, waiting for their responses.
	asked asked

	mu sync.Mutex
	st state // guarded by mu; changed only inside update
}

// update runs f with the state locked: the one place state changes.
func (cn *conn) update(f func(st *state)) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	f(&cn.st)
}

// Serve runs the server until In reaches EOF or ctx ends.
//
// On EOF it stops reading and answers the requests already read within
// Config.EOFGrace; a call to a tool that is not read-only (runTasks) is cancelled
// at once, so that its children do not outlive the client, and what still runs
// when the grace is over is cancelled too. It then waits for the workers, flushes
// the replies and returns nil. A cancelled request gets no reply.
//
// When ctx ends (SIGTERM, SIGINT) it cancels every request at once, waits for the
// workers, flushes the replies already made and returns ctx.Err(); when writing
// Out fails (a broken pipe) it does the same and returns that error.
func Serve(ctx context.Context, cfg Config) error {
	if cfg.In == nil || cfg.Out == nil || cfg.Tools == nil {
		return errors.New("actor.Serve: In, Out and Tools are required")
	}
	return newConn(cfg, newSession(cfg)).serve(ctx, cfg.In)
}

func newConn(cfg Config, h handler) *conn {
	cn := &conn{
		log:      cfg.Logger,
		mask:     cfg.Mask,
		handler:  h,
		workers:  cfg.Workers,
		maxLine:  cfg.MaxLineBytes,
		eofGrace: cfg.EOFGrace,
		out:      cfg.Out,

		afterFirst: cfg.AfterFirstFrame,
		work:       newQueue[*call](),
		replies:    newQueue[outMsg](),
	}
	cn.st = newState(cn.replies, cfg.observe)
	if cn.mask == nil {
		cn.mask = func(v string) string { return v }
	}
	if cn.workers <= 0 {
		cn.workers = max(4, 2*runtime.NumCPU())
	}
	if cn.maxLine <= 0 {
		cn.maxLine = DefaultMaxLineBytes
	}
	if cn.eofGrace == 0 {
		cn.eofGrace = DefaultEOFGrace
	}
	return cn
}

// serve runs the reader, the dispatcher and the writer, and shuts them down in
// order: the reader first, then the calls (within the grace on EOF), then the
// writer once the last reply is queued.
func (cn *conn) serve(ctx context.Context, in io.Reader) error {
	in, interrupt, release := interruptible(in)
	defer release()

	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	cn.base, cn.stop = runCtx, stop

	var wg conc.WaitGroup
	readDone := make(chan error, 1)
	dispatched := make(chan struct{})
	wg.Go(cn.writeLoop)
	wg.Go(func() {
		defer close(dispatched)
		cn.dispatchLoop()
	})
	wg.Go(func() {
		err := errors.New("actor: reader panicked")
		defer func() { readDone <- err }()
		err = cn.readLoop(newFrameReader(in, cn.maxLine))
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
	cn.work.close() // nothing more is read: the pool's queue ends here

	var cause error
	switch {
	case runCtx.Err() != nil:
		cause = context.Cause(runCtx) // a signal, or the broken reply stream
	case readErr != nil:
		cause = fmt.Errorf("actor: reading requests: %w", readErr)
	default:
		cause = cn.answerWithinGrace(runCtx, dispatched)
	}
	cn.log.Debug().AnErr("cause", cause).Msg("mcp server shutting down")
	stop(cause)
	cn.update(func(st *state) { st.cancelAll(cause) })
	cn.handler.endTasks(cause) // no task sends anything after this
	<-dispatched               // every call has finished: no more replies
	cn.replies.close()
	if d, ok := cn.out.(interface{ SetWriteDeadline(time.Time) error }); ok {
		_ = d.SetWriteDeadline(time.Now().Add(shutdownFlushTimeout))
		defer d.SetWriteDeadline(time.Time{})
	}
	wg.Wait()

	var writeErr error
	cn.update(func(st *state) { writeErr = st.writeErr })
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

// answerWithinGrace lets the calls read before EOF finish, for at most the grace,
// and returns the cause the rest are then cancelled with. Calls to tools that are
// not read-only are cancelled at once. A signal or a broken reply stream ends the
// grace early.
func (cn *conn) answerWithinGrace(runCtx context.Context, dispatched <-chan struct{}) error {
	if cn.eofGrace < 0 {
		return errStdinClosed
	}
	cn.log.Debug().Dur("grace", cn.eofGrace).Msg("mcp stdin closed: answering the requests read")
	cn.update(func(st *state) { st.stdinClosed(errStdinClosed) })
	cn.handler.cancelTasks(errStdinClosed) // a task runs tasks: its children do not outlive the client
	grace := time.NewTimer(cn.eofGrace)
	defer grace.Stop()
	select {
	case <-dispatched:
		return errStdinClosed
	case <-grace.C:
		return fmt.Errorf("%w %v ago, and the call was still running", errStdinClosed, cn.eofGrace)
	case <-runCtx.Done():
		return context.Cause(runCtx)
	}
}
