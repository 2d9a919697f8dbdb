package actor

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/internal/jsonquote"
)

// The MCP revisions the server speaks.
const (
	Rev20241105 = "2024-11-05"
	Rev20250326 = "2025-03-26"
	Rev20250618 = "2025-06-18"
	Rev20251125 = "2025-11-25"
	// Rev20260728 is the stateless revision: no handshake, server/discover, the
	// revision named in each request's _meta, resultType on every result.
	Rev20260728 = "2026-07-28"
)

// handshakeRevisions are the revisions initialize negotiates, newest first; a
// client asking for another is offered the first.
var handshakeRevisions = []string{Rev20251125, Rev20250618, Rev20250326, Rev20241105}

// SupportedRevisions returns every revision the server speaks, newest first, as
// server/discover and the unsupported-version error list them.
func SupportedRevisions() []string {
	return append([]string{Rev20260728}, handshakeRevisions...)
}

// Features that came with a revision; revisions compare as their date strings.
func hasAnnotations(rev string) bool     { return rev >= Rev20250326 } // tool annotations, progress message
func hasStructured(rev string) bool      { return rev >= Rev20250618 } // tool title, outputSchema, structuredContent
func isStateless(rev string) bool        { return rev >= Rev20260728 } // resultType, per-request revision
func hasProgressMessage(rev string) bool { return rev >= Rev20250326 }

// requestMeta is what the server reads from a request's params._meta.
type requestMeta struct {
	ProtocolVersion    json.RawMessage `json:"io.modelcontextprotocol/protocolVersion"`
	ProgressToken      json.RawMessage `json:"progressToken"`
	ClientCapabilities json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
}

// metaRead is what readMeta found: the protocol version (when a string), the progress token (when
// a string or a number) and the client's per-request capabilities.
type metaRead struct {
	version       string
	progressToken json.RawMessage
	caps          clientCaps
}

// readMeta reads params._meta. Anything it cannot read is ignored.
func readMeta(params json.RawMessage) (out metaRead) {
	if firstByte(params) != '{' {
		return out
	}
	// Without a backslash the key is in the bytes as it is: params with no "_meta" in them have
	// none, and are not decoded for it (a page of a log is asked with a 300-byte cursor).
	if bytes.IndexByte(params, '\\') < 0 && !bytes.Contains(params, []byte(`"_meta"`)) {
		return out
	}
	var p struct {
		Meta json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || firstByte(p.Meta) != '{' {
		return out
	}
	var m requestMeta
	if json.Unmarshal(p.Meta, &m) != nil {
		return out
	}
	_ = json.Unmarshal(m.ProtocolVersion, &out.version)
	if validID(m.ProgressToken) {
		out.progressToken = m.ProgressToken
	}
	out.caps = readCaps(m.ClientCapabilities)
	out.caps.tasks = false // 2025-11-25's tasks are declared at initialize only
	return out
}

// tasksExtension names the tasks extension of the stateless revision.
const tasksExtension = "io.modelcontextprotocol/tasks"

// readCaps reads a client's capabilities object: tasks, the tasks extension, and form
// elicitation (an elicitation object that is empty, or names form).
func readCaps(raw json.RawMessage) clientCaps {
	var c struct {
		Tasks       json.RawMessage            `json:"tasks"`
		Elicitation map[string]json.RawMessage `json:"elicitation"`
		Extensions  map[string]json.RawMessage `json:"extensions"`
	}
	if firstByte(raw) != '{' || json.Unmarshal(raw, &c) != nil {
		return clientCaps{}
	}
	_, form := c.Elicitation["form"]
	_, ext := c.Extensions[tasksExtension]
	return clientCaps{
		tasks:   firstByte(c.Tasks) == '{',
		taskExt: ext,
		elicit:  c.Elicitation != nil && (len(c.Elicitation) == 0 || form),
	}
}

// unsupportedRevision is the -32022 error for a request naming revision requested.
func unsupportedRevision(requested string) error {
	data, _ := json.Marshal(struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}{SupportedRevisions(), requested})
	return &Error{
		Code:    ErrUnsupportedProtocolVersion.Code,
		Message: fmt.Sprintf("unsupported protocol version %q", requested),
		Data:    data,
	}
}

// negotiate answers initialize's protocolVersion: the one asked if the server
// speaks it through the handshake, else the newest.
func negotiate(asked string) string {
	if slices.Contains(handshakeRevisions, asked) {
		return asked
	}
	return handshakeRevisions[0]
}

// implementation is the serverInfo object.
type implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// stateless holds the fields every result carries under the stateless revision.
type stateless struct {
	ResultType string         `json:"resultType,omitempty"`
	Meta       *statelessMeta `json:"_meta,omitempty"`
}

type statelessMeta struct {
	ServerInfo  *implementation `json:"io.modelcontextprotocol/serverInfo,omitempty"`
	RelatedTask *relatedTask    `json:"io.modelcontextprotocol/related-task,omitempty"`
}

// relatedTask ties a message to the task it belongs to.
type relatedTask struct {
	TaskID string `json:"taskId"`
}

// cacheable holds the caching hint of a stateless list or discover result.
type cacheable struct {
	TTLMs      *int   `json:"ttlMs,omitempty"`
	CacheScope string `json:"cacheScope,omitempty"`
}

var zeroTTL = 0

// cacheableFor returns the caching hint under rev: immediately stale, because the
// tool list depends on the workspace at call time.
func cacheableFor(rev string) cacheable {
	if !isStateless(rev) {
		return cacheable{}
	}
	return cacheable{TTLMs: &zeroTTL, CacheScope: "private"}
}

type serverCapabilities struct {
	Tools struct {
		ListChanged bool `json:"listChanged"`
	} `json:"tools"`
	Tasks      *serverTasks      `json:"tasks,omitempty"`
	Extensions *serverExtensions `json:"extensions,omitempty"`
}

// serverTasks is 2025-11-25's tasks capability: tasks/list, tasks/cancel, and task-augmented
// tools/call.
type serverTasks struct {
	List     *struct{} `json:"list,omitempty"`
	Cancel   *struct{} `json:"cancel,omitempty"`
	Requests struct {
		Tools struct {
			Call *struct{} `json:"call,omitempty"`
		} `json:"tools"`
	} `json:"requests"`
}

// serverExtensions are the extensions the server speaks (stateless revision).
type serverExtensions struct {
	Tasks *struct{} `json:"io.modelcontextprotocol/tasks,omitempty"`
}

type initializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    serverCapabilities `json:"capabilities"`
	ServerInfo      implementation     `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitempty"`
}

type discoverResult struct {
	SupportedVersions []string           `json:"supportedVersions"`
	Capabilities      serverCapabilities `json:"capabilities"`
	Instructions      string             `json:"instructions,omitempty"`
	cacheable
	stateless
}

type emptyResult struct {
	stateless
}

// toolWire is a tool as tools/list lists it; what a revision lacks stays empty.
type toolWire struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  json.RawMessage  `json:"inputSchema"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *annotationsWire `json:"annotations,omitempty"`
	Execution    *executionWire   `json:"execution,omitempty"`
	Meta         *toolMetaWire    `json:"_meta,omitempty"`
}

// executionWire is a tool's execution object (2025-11-25): whether it may run as a task.
type executionWire struct {
	TaskSupport string `json:"taskSupport"`
}

// toolMetaWire is a tool's _meta: the hints hosts that defer tools behind a search read.
type toolMetaWire struct {
	AlwaysLoad bool   `json:"anthropic/alwaysLoad,omitempty"`
	SearchHint string `json:"anthropic/searchHint,omitempty"`
}

type annotationsWire struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

type listToolsResult struct {
	Tools      []toolWire `json:"tools"`
	NextCursor string     `json:"nextCursor,omitempty"`
	cacheable
	stateless
}

var defaultInputSchema = json.RawMessage(`{"type":"object"}`)

// wireTool lists t as revision rev knows tools: 2024-11-05 has name, description
// and inputSchema; 2025-03-26 adds annotations (the title goes there); 2025-06-18
// adds title and outputSchema. Every revision carries the search hints in _meta; a
// client that declared tasks (tasks) is told which tools may run as one.
func wireTool(t tool.Tool, rev string, tasks bool) toolWire {
	w := toolWire{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
	if w.InputSchema == nil {
		w.InputSchema = defaultInputSchema
	}
	if t.AlwaysLoad || t.SearchHint != "" {
		w.Meta = &toolMetaWire{AlwaysLoad: t.AlwaysLoad, SearchHint: t.SearchHint}
	}
	if tasks && t.TaskSupport != "" {
		w.Execution = &executionWire{TaskSupport: t.TaskSupport}
	}
	if !hasAnnotations(rev) {
		return w
	}
	a := annotationsWire{
		ReadOnlyHint:    t.Annotations.ReadOnlyHint,
		DestructiveHint: t.Annotations.DestructiveHint,
		IdempotentHint:  t.Annotations.IdempotentHint,
		OpenWorldHint:   t.Annotations.OpenWorldHint,
	}
	if hasStructured(rev) {
		w.Title = t.Title
		w.OutputSchema = t.OutputSchema
	} else {
		a.Title = t.Title
	}
	if a != (annotationsWire{}) {
		w.Annotations = &a
	}
	return w
}

// encodeCursor and decodeCursor make the opaque tools/list cursor: the name of
// the last tool of the previous page.
func encodeCursor(lastName string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(lastName))
}

func decodeCursor(cursor string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	return string(b), err == nil && len(b) > 0
}

// callToolResult is a tools/call result: one text content, the tool's answer as JSON text or
// an error's message, and the answer again as structuredContent where the revision has it.
type callToolResult struct {
	// Text is the text content's text.
	Text []byte
	// StructuredContent is the answer, compact JSON as tool.Call answers it.
	StructuredContent json.RawMessage
	IsError           bool
	stateless
}

// appendJSON appends r's JSON: {"content":[{"type":"text","text":…}], then structuredContent,
// isError and the stateless fields when set. It is written here rather than by json.Marshal,
// which would compact (read through) the answer once more and quote the text through its table:
// a page of a long log is 40 kB, twice over (see package jsonquote).
func (r callToolResult) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"content":[{"type":"text","text":`...)
	dst = jsonquote.Append(dst, r.Text)
	dst = append(dst, "}]"...)
	if len(r.StructuredContent) > 0 {
		dst = append(dst, `,"structuredContent":`...)
		dst = append(dst, r.StructuredContent...)
	}
	if r.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	if st, err := json.Marshal(r.stateless); err == nil && len(st) > 2 {
		dst = append(dst, ',')
		dst = append(dst, st[1:len(st)-1]...)
	}
	return append(dst, '}')
}

// size is about how many bytes appendJSON writes: the text quoted (mostly one byte a byte) and
// the structured content.
func (r callToolResult) size() int {
	return len(r.Text) + len(r.Text)/8 + len(r.StructuredContent) + 256
}

// done gives the tool's answer back to buffers, once appendJSON wrote it into the reply.
func (r callToolResult) done(buffers *tool.Buffers) {
	if !r.IsError {
		buffers.Put(r.Text)
	}
}

// selfEncoding is a result that writes its own JSON (see callToolResult.appendJSON).
type selfEncoding interface {
	appendJSON(dst []byte) []byte
	// size is about how long its JSON is.
	size() int
	// done releases what the result holds once its JSON is written.
	done(buffers *tool.Buffers)
}

type progressParams struct {
	ProgressToken json.RawMessage `json:"progressToken"`
	Progress      float64         `json:"progress"`
	Total         *float64        `json:"total,omitempty"`
	Message       string          `json:"message,omitempty"`
}
