package actor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/vzn/vx/actor/tool"
)

// listTools answers tools/list, one page at a time when ToolsPageSize is set.
func (m *session) listTools(c *call) (any, error) {
	var p struct {
		Cursor json.RawMessage `json:"cursor"`
	}
	if c.params != nil {
		if err := json.Unmarshal(c.params, &p); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidParams, err)
		}
	}
	all := m.registry.List(c.ctx)
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
	if m.pageSize > 0 && from+m.pageSize < to {
		to = from + m.pageSize
	}
	res := listToolsResult{Tools: make([]toolWire, 0, to-from), cacheable: cacheableFor(c.revision), stateless: m.statelessFor(c.revision)}
	tasks := c.caps.tasks && !isStateless(c.revision)
	for _, t := range all[from:to] {
		res.Tools = append(res.Tools, wireTool(t, c.revision, tasks))
	}
	if to < len(all) {
		res.NextCursor = encodeCursor(all[to-1].Name)
	}
	return res, nil
}

// callParams are the params of tools/call the server reads.
type callParams struct {
	Name      json.RawMessage `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// Task asks for the call to run as a task (2025-11-25).
	Task *struct {
		TTL *int64 `json:"ttl"`
	} `json:"task"`
	// InputResponses and RequestState answer an input_required result (stateless revision).
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	RequestState   string                     `json:"requestState"`
}

// callTool answers tools/call: checks the name and arguments, runs the tool's
// handler, and turns its answer into a result (an isError one for its errors). A call
// the client asked to run as a task, to a tool that may, answers the task instead.
func (m *session) callTool(c *call) (any, error) {
	var p callParams
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
	t, ok := m.registry.Lookup(c.ctx, name)
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
	if d := m.taskDialect(c, t, &p); d != noTask {
		return m.callAsTask(c, t, args, &p, d)
	}
	if !c.enterTool(readOnly(t)) {
		return nil, context.Cause(c.ctx) // cancelled: never answered
	}
	tc := &tool.Call{Args: args, Progress: m.progressFunc(c), Progressing: c.progressToken != nil, ProtocolVersion: c.revision,
		Buffers: &c.conn.buffers, Confirm: m.confirmFunc(c, name, args, &p)}
	js, err := t.Call(c.ctx, tc)
	return m.toolResult(c, name, js, err)
}

// toolResult turns a tool's answer, or its error, into the tools/call result: the answer as text
// and structuredContent, an error as an isError result (its text masked), a confirmation the
// client is still to give as an input_required result; an answer that could not be encoded is
// -32603.
func (m *session) toolResult(c *call, name string, js json.RawMessage, err error) (any, error) {
	if errors.Is(err, tool.ErrEncoding) {
		return nil, fmt.Errorf("%w: %v", ErrInternal, err)
	}
	var ask *inputRequired
	if errors.As(err, &ask) {
		return ask.result(), nil
	}
	res := callToolResult{stateless: m.statelessFor(c.revision)}
	if err != nil {
		if !tool.IsRefusal(err) {
			ev := m.log.Debug().Str("tool", name).Str("error", m.mask(err.Error()))
			if cause := context.Cause(c.ctx); cause != nil { // it failed because it was cancelled
				ev = ev.Str("cause", m.mask(cause.Error()))
			}
			ev.Msg("mcp tool failed")
		}
		res.IsError = true
		res.Text = []byte(m.mask(err.Error()))
		return res, nil
	}
	res.Text = js
	if hasStructured(c.revision) && (firstByte(js) == '{' || isStateless(c.revision)) {
		res.StructuredContent = js
	}
	return res, nil
}

// readOnly reports whether t says it changes nothing; a tool without the hint
// may (MCP's default is not read-only).
func readOnly(t tool.Tool) bool {
	return t.Annotations.ReadOnlyHint != nil && *t.Annotations.ReadOnlyHint
}

// progressFunc returns the Call.Progress of c: notifications/progress for its
// token, shaped by c's revision; the conn sends them only while c runs, and
// only increasing.
func (m *session) progressFunc(c *call) func(done, total float64, message string) {
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
			p.Message = m.mask(message)
		}
		params, err := json.Marshal(p)
		if err != nil {
			return
		}
		c.notify(done, appendNotification(nil, "notifications/progress", params))
	}
}
