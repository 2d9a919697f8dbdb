package actor

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/rs/zerolog"

	"github.com/vzn/vx/actor/tool"
)

// session is the MCP side of a connection: the handshake and the revision it
// negotiates, the requests answered on the reader (ping, initialize,
// server/discover), and tools/list and tools/call, shaped by revision, on the
// workers.
type session struct {
	log      zerolog.Logger
	registry *tool.Registry
	mask     func(string) string
	info     implementation
	pageSize int
	// instructions is what the server tells every host to put before its model (initialize,
	// server/discover); "" for none.
	instructions string
	// taskTools is Config.Tasks.
	taskTools bool
	// tasks holds the MCP tasks the connection started; confirms signs the state of a
	// confirmation asked of a stateless client.
	tasks    *taskTable
	confirms *confirmKey

	// revision is the revision initialize negotiated; "" before any. Only the
	// reader goroutine touches it: initialize and preempt both run there, and a
	// queued call carries the revision it was read under.
	revision string
	// caps is what the client declared at initialize (reader goroutine only, as revision).
	caps clientCaps
}

// clientCaps is what a client declared it can do that the server acts on: tasks (2025-11-25's
// capabilities.tasks, or the io.modelcontextprotocol/tasks extension on a stateless request) and
// form elicitation (capabilities.elicitation).
type clientCaps struct {
	tasks   bool // 2025-11-25 tasks: initialize's capabilities.tasks
	taskExt bool // the io.modelcontextprotocol/tasks extension, declared on the request
	elicit  bool // form elicitation
}

func newSession(cfg Config) *session {
	m := &session{
		log:      cfg.Logger,
		registry: cfg.Tools,
		mask:     cfg.Mask,
		info:     implementation{Name: cfg.ServerName, Version: cfg.ServerVersion},
		pageSize: cfg.ToolsPageSize,

		instructions: cfg.Instructions,
		taskTools:    cfg.Tasks,
		tasks:        newTaskTable(),
		confirms:     newConfirmKey(),
	}
	if m.mask == nil {
		m.mask = func(v string) string { return v }
	}
	if m.info.Name == "" {
		m.info.Name = "vx"
	}
	if m.info.Version == "" {
		m.info.Version = "dev"
	}
	return m
}

// preempt answers ping, initialize, server/discover, tasks/get, tasks/list, tasks/cancel
// and tasks/update on the reader, refuses an unknown method or a revision the server
// does not speak, and queues tools/list, tools/call and tasks/result (which waits for
// its task) with the revision they are made under and what their client declared.
func (m *session) preempt(msg message) (*pooled, any, error) {
	if msg.method == "initialize" {
		// Its version is its params' protocolVersion, negotiated: an unknown one is offered the
		// newest, whatever its _meta says.
		res, err := m.initialize(msg.params)
		return nil, res, err
	}
	meta, err := m.metaOf(msg)
	if err != nil {
		return nil, nil, err
	}
	rev := meta.revision
	switch msg.method {
	case "ping":
		return nil, emptyResult{m.statelessFor(rev)}, nil
	case "server/discover":
		var caps serverCapabilities
		if m.taskTools {
			caps.Extensions = &serverExtensions{Tasks: &struct{}{}}
		}
		return nil, discoverResult{
			SupportedVersions: SupportedRevisions(),
			Capabilities:      caps,
			Instructions:      m.instructions,
			cacheable:         cacheableFor(Rev20260728),
			stateless:         m.statelessFor(Rev20260728),
		}, nil
	case "tools/list", "tools/call", "tasks/result":
		// A handshake revision serves the tools only once initialize was answered; a
		// stateless request names its revision itself and needs none.
		if rev == "" {
			return nil, nil, fmt.Errorf("%w: %s before initialize (send initialize first, or name protocol version %s in params._meta)",
				ErrInvalidRequest, msg.method, Rev20260728)
		}
		if msg.method == "tasks/result" && !m.tasksSpoken(meta) {
			return nil, nil, fmt.Errorf("%w: %q", ErrMethodNotFound, msg.method)
		}
		return &pooled{revision: rev, progressToken: meta.progressToken, caps: meta.caps}, nil, nil
	case "tasks/get", "tasks/list", "tasks/cancel", "tasks/update":
		if rev == "" || !m.tasksSpoken(meta) {
			return nil, nil, fmt.Errorf("%w: %q", ErrMethodNotFound, msg.method)
		}
		res, err := m.taskRequest(msg, rev)
		return nil, res, err
	default:
		return nil, nil, fmt.Errorf("%w: %q", ErrMethodNotFound, msg.method)
	}
}

// reqMeta is what the reader learns of a request from its _meta and the session: the revision it
// is made under, its progress token, and what its client declared.
type reqMeta struct {
	revision      string
	progressToken json.RawMessage
	caps          clientCaps
}

// metaOf returns the revision a request is made under: the one its _meta names (the stateless
// revision; any other the server does not speak is refused with -32022), else the one initialize
// negotiated, else "" (no handshake yet); and its progress token and client capabilities (the
// stateless request's own, else initialize's).
func (m *session) metaOf(msg message) (reqMeta, error) {
	rm := readMeta(msg.params)
	switch {
	case rm.version == Rev20260728:
		return reqMeta{revision: rm.version, progressToken: rm.progressToken, caps: rm.caps}, nil
	case rm.version != "" && !slices.Contains(SupportedRevisions(), rm.version):
		return reqMeta{}, unsupportedRevision(rm.version)
	}
	return reqMeta{revision: m.revision, progressToken: rm.progressToken, caps: m.caps}, nil
}

// tasksSpoken reports whether a request may use the tasks/* methods, on a server that runs tasks
// (Config.Tasks): a stateless one always (the extension's), a handshake one when its client
// declared tasks.
func (m *session) tasksSpoken(meta reqMeta) bool {
	return m.taskTools && (isStateless(meta.revision) || meta.caps.tasks)
}

// initialize negotiates the revision and describes the server.
func (m *session) initialize(params json.RawMessage) (any, error) {
	var p struct {
		ProtocolVersion json.RawMessage `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
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
	m.revision = rev
	m.caps = readCaps(p.Capabilities)
	res := initializeResult{ProtocolVersion: rev, ServerInfo: m.info, Instructions: m.instructions}
	if m.taskTools && m.caps.tasks && rev >= Rev20251125 {
		res.Capabilities.Tasks = &serverTasks{List: &struct{}{}, Cancel: &struct{}{}}
		res.Capabilities.Tasks.Requests.Tools.Call = &struct{}{}
	} else {
		m.caps.tasks = false // tasks came with 2025-11-25
	}
	return res, nil
}

// handle answers tools/list or tools/call on a worker.
func (m *session) handle(c *call) (any, error) {
	if firstByte(c.params) == '[' {
		return nil, fmt.Errorf("%w: params must be an object", ErrInvalidParams)
	}
	switch c.method {
	case "tools/list":
		return m.listTools(c)
	case "tasks/result":
		return m.taskResult(c)
	}
	return m.callTool(c)
}

// statelessFor returns the stateless fields for a result under rev (none before
// the stateless revision).
func (m *session) statelessFor(rev string) stateless {
	if !isStateless(rev) {
		return stateless{}
	}
	return stateless{ResultType: "complete", Meta: &statelessMeta{ServerInfo: &m.info}}
}
