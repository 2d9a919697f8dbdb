// Package tool is the framework of MCP tools that the server (package actor) lists and calls and
// that package tools fills with vx's fifteen: a Tool built by New from a typed handler, the
// Registry the server holds, the strict decoding of a call's arguments into the handler's In, the
// schemas derived from In and Out, and the fitting of an answer to the budget (package window).
//
// It imports nothing of vx's engine, so the JSON-RPC core builds and tests without SQLite,
// esbuild or goja. It lives under actor because it is the server's contract with its tools (as
// net/http's Handler is the server's), and it imports nothing of actor: package tools depends on
// it and on the engine, never on the server.
package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/vzn/vx/actor/tool/window"
)

// Tool is one MCP tool: what tools/list says of it, and its handler. Build one with New.
type Tool struct {
	// Name is the tool's identifier in tools/list and tools/call, e.g. "listTasks".
	Name string
	// Title is the human-readable name (listed from revision 2025-06-18 on; under
	// 2025-03-26 it is carried as annotations.title).
	Title string
	// Description tells an agent when to call the tool and what it answers.
	Description string
	// InputSchema is the JSON Schema object of the arguments. Left nil, New derives it from the
	// handler's In (an In of json.RawMessage lists {"type":"object"}).
	InputSchema json.RawMessage
	// OutputSchema is the JSON Schema object of the structured result, listed from revision
	// 2025-06-18 on. Left nil, New derives it from the handler's Out (an interface Out lists none).
	OutputSchema json.RawMessage
	// Paged says the answer is fitted by a window (Call.Window), so a derived output schema
	// carries the page fields nextCursor, total and omitted.
	Paged bool
	// Optional names top-level fields of Out that an answer may leave out although Out writes
	// them; a derived output schema does not require them.
	Optional []string
	// OutputTypes are, for a derived output schema, the schemas of Go types whose shape the type
	// does not tell: an interface field that always holds an object, say.
	OutputTypes map[reflect.Type]*jsonschema.Schema
	// Annotations are the behaviour hints (listed from revision 2025-03-26 on).
	Annotations Annotations
	// AlwaysLoad asks a host that defers tools behind a search (Claude Code) to show this one to
	// the model from the first turn: listed as _meta["anthropic/alwaysLoad"].
	AlwaysLoad bool
	// SearchHint is the few words such a host matches a search for a deferred tool against:
	// listed as _meta["anthropic/searchHint"].
	SearchHint string
	// TaskSupport says whether the tool may run as an MCP task: "optional" or "" (never). It is
	// listed as execution.taskSupport to a client that declared tasks.
	TaskSupport string

	run    func(ctx context.Context, call *Call) (json.RawMessage, error)
	budget func(ctx context.Context) int // the registry's (Registry.WithBudget)
}

// Annotations are a tool's behaviour hints; a nil hint is omitted from the listing
// (the client then assumes the protocol's default).
type Annotations struct {
	// ReadOnlyHint: the tool does not modify its environment.
	ReadOnlyHint *bool
	// DestructiveHint: the tool may perform destructive updates (meaningful when not read-only).
	DestructiveHint *bool
	// IdempotentHint: calling it again with the same arguments has no further effect.
	IdempotentHint *bool
	// OpenWorldHint: the tool interacts with an open world of external entities.
	OpenWorldHint *bool
}

// Handler answers one call whose arguments were decoded into in (see Decode). Its answer is
// marshalled to JSON — fitted to the budget when the handler asked for it with Call.Window — and
// becomes the call's structuredContent plus the same JSON as text content. An error that is (or
// wraps) a *Refusal, or any other error, is answered as an isError result whose text is the
// error's message (secret values masked). A handler must honour ctx: a cancelled call gets no
// reply and its work should stop.
type Handler[In, Out any] func(ctx context.Context, call *Call, in In) (Out, error)

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// New returns t answering with h: the argument type is named once, in h, and so is the answer's.
// An In of json.RawMessage gets the arguments object as it came, host keys removed; any other In
// must be a struct, decoded strictly by Decode. A nil t.InputSchema or t.OutputSchema is derived
// from In or Out (see ArgTag, Paged, Optional, OutputTypes); an Out of an interface type or
// json.RawMessage, an answer of any shape, lists none. New panics on an In it cannot decode into
// (a programming error).
func New[In, Out any](t Tool, h Handler[In, Out]) Tool {
	in, out := reflect.TypeFor[In](), reflect.TypeFor[Out]()
	if in != rawMessageType && in.Kind() != reflect.Struct {
		panic(fmt.Sprintf("tool.New(%q): arguments must be a struct or json.RawMessage, not %v", t.Name, in))
	}
	if t.InputSchema == nil {
		t.InputSchema = inputSchemaOf(in)
	}
	if t.OutputSchema == nil && out.Kind() != reflect.Interface && out != rawMessageType {
		t.OutputSchema = outputSchemaOf(out, t)
	}
	var plan map[reflect.Type][]argField
	if in != rawMessageType {
		var err error
		if plan, err = fieldsPlan(in); err != nil {
			panic(fmt.Sprintf("tool.New(%q): %v", t.Name, err))
		}
	}
	t.run = func(ctx context.Context, call *Call) (json.RawMessage, error) {
		var args In
		if in == rawMessageType {
			reflect.ValueOf(&args).Elem().SetBytes(call.Args)
		} else if err := decodeArgs(call.Args, &args, plan); err != nil {
			return nil, err
		}
		answer, err := h(ctx, call, args)
		if err != nil {
			return nil, err
		}
		return call.fit(answer)
	}
	return t
}

// Call runs the tool's handler for one tools/call and answers its JSON, valid and compact (a
// handler that writes its own must write it so: the server puts it in the reply as it is). The
// host's own keys (hostKeys) are removed from call.Args first, whatever their values. An error
// that wraps ErrEncoding means the answer could not be marshalled (a programming error). A caller
// that set call.Buffers may put the answer back there once it is done with it.
func (t Tool) Call(ctx context.Context, call *Call) (json.RawMessage, error) {
	if t.run == nil {
		return nil, fmt.Errorf("tool %q has no handler (build it with tool.New)", t.Name)
	}
	call.tool = t.Name
	call.Args = dropHostKeys(call.Args)
	if call.Budget == nil {
		call.Budget = t.budget
	}
	return t.run(ctx, call)
}

// ErrEncoding marks an answer that could not be marshalled to JSON.
var ErrEncoding = errors.New("encoding the answer")

// Call is what a handler gets for one tools/call.
type Call struct {
	// Args is the call's arguments, always a JSON object (the server refuses others with -32602
	// before a handler runs), the host's own keys (hostKeys) removed.
	Args json.RawMessage
	// Progress sends notifications/progress for the request's _meta.progressToken:
	// done so far, total when known (0 = unknown) and a message. It is a no-op
	// without a token, drops values that do not strictly increase, and sends
	// nothing once the handler has returned or the call was cancelled.
	// It is safe to call from any goroutine and never nil.
	Progress func(done, total float64, message string)
	// Progressing reports whether the request has a progress token: without one, Progress sends
	// nothing and a handler need not work out what it would say.
	Progressing bool
	// ProtocolVersion is the MCP revision the request was made under, e.g. "2025-06-18".
	ProtocolVersion string
	// Budget answers the budget, in characters of an answer's text, that Window fits an answer
	// to; nil means the registry's (Registry.WithBudget), else window.DefaultChars.
	Budget func(ctx context.Context) int
	// Buffers, when set, is the server's pool of answer buffers (see Buffer).
	Buffers *Buffers
	// Started, when set, is told the id of the work the call started (runTasks: the run id) as
	// soon as it has one; a call run as an MCP task takes it as the task's id. It is called at
	// most once and never after the handler returned.
	Started func(id string)
	// Confirm, when set, asks the host's user to confirm what the call is about to do, in one
	// message: it answers true when the user accepted, false when they declined or cancelled, and
	// an error the handler returns as it is when the answer is not in yet (a stateless client is
	// asked through an input_required result and calls again with it) or the call was cancelled.
	// It is nil where the host cannot ask its user.
	Confirm func(ctx context.Context, message string) (bool, error)

	tool   string
	window *windowing
}

// windowing is what Window asked: the request (its budget filled in when fitted) and the lists.
type windowing struct {
	ctx   context.Context
	req   window.Request
	lists []window.List
}

// Buffer answers an empty slice with room for n bytes, for a handler that writes its answer's
// JSON itself (a json.RawMessage answer): from the server's pool when it keeps one, which takes
// the answer back once the reply is built. The handler must not keep the slice.
func (c *Call) Buffer(n int) []byte {
	if c.Buffers == nil {
		return make([]byte, 0, n)
	}
	return c.Buffers.Get(n)
}

// Chars answers the call's budget (see Budget).
func (c *Call) Chars(ctx context.Context) int {
	if c.Budget == nil {
		return window.DefaultChars
	}
	return c.Budget(ctx)
}

// Window asks for the handler's answer to be fitted to the call's budget: lists, views of the
// slices inside the answer the handler then returns, are windowed from cursor (see package
// window), and the page fields added where the answer is not whole.
func (c *Call) Window(ctx context.Context, cursor string, lists ...window.List) {
	c.WindowRequest(ctx, window.Request{Cursor: cursor}, lists...)
}

// WindowRequest is Window for a request that says more: the question the next cursor continues
// (a run's tasks, which another tool serves past the first page), or an answer that is final.
// The request's question defaults to this tool and this call's arguments; its budget is the call's.
func (c *Call) WindowRequest(ctx context.Context, req window.Request, lists ...window.List) {
	c.window = &windowing{ctx: ctx, req: req, lists: lists}
}

// fit marshals answer, through the window the handler asked for, if any.
func (c *Call) fit(answer any) (json.RawMessage, error) {
	if c.window == nil {
		if raw, ok := answer.(json.RawMessage); ok && raw != nil {
			// A handler that wrote its answer's JSON itself (getTaskLog's pages) answers it as
			// written: marshalling it again would only compact what json.Marshal made compact.
			return raw, nil
		}
		js, err := json.Marshal(answer)
		if err != nil {
			return nil, fmt.Errorf("%w of tool %q: %v", ErrEncoding, c.tool, err)
		}
		return js, nil
	}
	req := c.window.req
	if req.Question.Tool == "" {
		req.Question.Tool = c.tool
	}
	req.Question.Args = c.Args
	req.Chars = c.Chars(c.window.ctx)
	js, err := window.Fit(answer, req, c.window.lists...)
	var ce *window.CursorError
	if errors.As(err, &ce) {
		return nil, &Refusal{Msg: ce.Msg}
	}
	return js, err
}

// Refusal is a tool's own refusal of a call (an argument it cannot accept, a
// question it cannot answer): the server answers it as an isError result whose
// text is Msg, one line, secret values masked.
type Refusal struct {
	// Msg is the one-line message the agent reads.
	Msg string
}

// Error returns the refusal's message.
func (r *Refusal) Error() string { return r.Msg }

// Refusef returns a *Refusal whose message is formatted as fmt.Sprintf does.
func Refusef(format string, args ...any) error {
	return &Refusal{Msg: fmt.Sprintf(format, args...)}
}

// IsRefusal reports whether err is or wraps a *Refusal.
func IsRefusal(err error) bool {
	var r *Refusal
	return errors.As(err, &r)
}
