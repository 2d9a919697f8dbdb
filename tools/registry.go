// Package tools holds the MCP tools of `vx mcp`: the registry the server lists and
// calls them through, the strict argument decoding every tool shares, and one file
// per tool, each a thin adapter over an engine function or a proc child.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Tool is one MCP tool: metadata plus a handler.
type Tool struct {
	// Name is the tool's identifier in tools/list and tools/call, e.g. "listTasks".
	Name string
	// Title is the human-readable name (listed from revision 2025-06-18 on; under
	// 2025-03-26 it is carried as annotations.title).
	Title string
	// Description tells an agent when to call the tool and what it answers.
	Description string
	// InputSchema is the JSON Schema object of the arguments; nil lists {"type":"object"}.
	InputSchema json.RawMessage
	// OutputSchema is the JSON Schema object of the structured result; nil lists none.
	// It is listed from revision 2025-06-18 on.
	OutputSchema json.RawMessage
	// Annotations are the behaviour hints (listed from revision 2025-03-26 on).
	Annotations Annotations
	// Handler answers one call. Its result is marshalled to JSON and becomes the
	// call's structuredContent plus the same JSON as text content. An error that
	// is (or wraps) a *Refusal, or any other error, is answered as an isError
	// result whose text is the error's message (secret values masked). A handler
	// must honour ctx: a cancelled call gets no reply and its work should stop.
	Handler func(ctx context.Context, call *Call) (any, error)
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

// Call is what a handler gets for one tools/call.
type Call struct {
	// Args is the call's arguments, always a JSON object (the server refuses
	// others with -32602 before a handler runs). Decode it with DecodeArgs.
	Args json.RawMessage
	// Progress sends notifications/progress for the request's _meta.progressToken:
	// done so far, total when known (0 = unknown) and a message. It is a no-op
	// without a token, drops values that do not strictly increase, and sends
	// nothing once the handler has returned or the call was cancelled.
	// It is safe to call from any goroutine and never nil.
	Progress func(done, total float64, message string)
	// ProtocolVersion is the MCP revision the request was made under, e.g. "2025-06-18".
	ProtocolVersion string
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

// Lister chooses, at call time, which of the registered tools are available now
// (e.g. runTasks hidden when the workspace says mcp({ run: false })). It gets every
// registered tool in registration order and returns those to list, a subset in the
// same order. A tool a Lister leaves out is also unknown to Lookup.
type Lister func(ctx context.Context, all []Tool) []Tool

// Registry holds the tools the server lists and calls. It is immutable after
// construction and safe for concurrent use.
type Registry struct {
	tools  []Tool
	byName map[string]int
	lister Lister
}

// NewRegistry returns a registry of tools, listed in the order given. It panics on
// a programming error: an empty or duplicate name, a nil handler, or a schema that
// is not a JSON object.
func NewRegistry(tools ...Tool) *Registry {
	r := &Registry{tools: make([]Tool, 0, len(tools)), byName: make(map[string]int, len(tools))}
	for _, t := range tools {
		if err := checkTool(t); err != nil {
			panic(fmt.Sprintf("tools.NewRegistry: %v", err))
		}
		if _, dup := r.byName[t.Name]; dup {
			panic(fmt.Sprintf("tools.NewRegistry: duplicate tool name %q", t.Name))
		}
		r.byName[t.Name] = len(r.tools)
		r.tools = append(r.tools, t)
	}
	return r
}

func checkTool(t Tool) error {
	if t.Name == "" {
		return errors.New("a tool has no name")
	}
	if t.Handler == nil {
		return fmt.Errorf("tool %q has no handler", t.Name)
	}
	for what, schema := range map[string]json.RawMessage{"inputSchema": t.InputSchema, "outputSchema": t.OutputSchema} {
		if schema == nil {
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal(schema, &obj); err != nil || obj == nil {
			return fmt.Errorf("tool %q: %s is not a JSON object", t.Name, what)
		}
		if where := unportable(obj, what); where != "" {
			return fmt.Errorf("tool %q: %s uses what not every client accepts: %s", t.Name, what, where)
		}
	}
	return nil
}

// unportable answers where a schema leaves the portable subset that every MCP client and model
// provider accepts (Gemini's and OpenAI's function declarations): a `type` array, `oneOf` or
// `$ref`; "" when it does not.
func unportable(v any, path string) string {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["type"].([]any); ok {
			return path + ": a type array (write anyOf of single types)"
		}
		for _, k := range []string{"oneOf", "$ref"} {
			if _, ok := x[k]; ok {
				return path + ": " + k
			}
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if where := unportable(x[k], path+"."+k); where != "" {
				return where
			}
		}
	case []any:
		for i, item := range x {
			if where := unportable(item, fmt.Sprintf("%s[%d]", path, i)); where != "" {
				return where
			}
		}
	}
	return ""
}

// WithLister returns a registry of the same tools whose listed set l chooses per
// call; a nil l lists every tool.
func (r *Registry) WithLister(l Lister) *Registry {
	return &Registry{tools: r.tools, byName: r.byName, lister: l}
}

// List returns the tools available now, in registration order. The slice is the
// caller's to keep; the Tools in it share their schemas with the registry.
func (r *Registry) List(ctx context.Context) []Tool {
	if r.lister == nil {
		return append([]Tool(nil), r.tools...)
	}
	return r.lister(ctx, append([]Tool(nil), r.tools...))
}

// Lookup returns the tool called name if it is available now.
func (r *Registry) Lookup(ctx context.Context, name string) (Tool, bool) {
	i, ok := r.byName[name]
	if !ok {
		return Tool{}, false
	}
	if r.lister == nil {
		return r.tools[i], true
	}
	for _, t := range r.lister(ctx, append([]Tool(nil), r.tools...)) {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}
