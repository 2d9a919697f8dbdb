package actor

import (
	"encoding/json"
	"fmt"

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

	// revision is the revision initialize negotiated; "" before any. Only the
	// reader goroutine touches it: initialize and preempt both run there, and a
	// queued call carries the revision it was read under.
	revision string
}

func newSession(cfg Config) *session {
	m := &session{
		log:      cfg.Logger,
		registry: cfg.Tools,
		mask:     cfg.Mask,
		info:     implementation{Name: cfg.ServerName, Version: cfg.ServerVersion},
		pageSize: cfg.ToolsPageSize,
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

// preempt answers ping, initialize and server/discover on the reader, refuses an
// unknown method or a revision the server does not speak, and queues tools/list
// and tools/call with the revision they are made under.
func (m *session) preempt(msg message) (*pooled, any, error) {
	rev, progressToken, err := m.revisionOf(msg)
	if err != nil {
		return nil, nil, err
	}
	switch msg.method {
	case "ping":
		return nil, emptyResult{m.statelessFor(rev)}, nil
	case "initialize":
		res, err := m.initialize(msg.params)
		return nil, res, err
	case "server/discover":
		return nil, discoverResult{
			SupportedVersions: SupportedRevisions(),
			cacheable:         cacheableFor(Rev20260728),
			stateless:         m.statelessFor(Rev20260728),
		}, nil
	case "tools/list", "tools/call":
		// A handshake revision serves the tools only once initialize was answered; a
		// stateless request names its revision itself and needs none.
		if rev == "" {
			return nil, nil, fmt.Errorf("%w: %s before initialize (send initialize first, or name protocol version %s in params._meta)",
				ErrInvalidRequest, msg.method, Rev20260728)
		}
		return &pooled{revision: rev, progressToken: progressToken}, nil, nil
	default:
		return nil, nil, fmt.Errorf("%w: %q", ErrMethodNotFound, msg.method)
	}
}

// revisionOf returns the revision a request is made under: the one its _meta
// names (the stateless revision), else the one initialize negotiated, else ""
// (no handshake yet). It also returns the request's progress token.
func (m *session) revisionOf(msg message) (rev string, progressToken json.RawMessage, err error) {
	version, progressToken := readMeta(msg.params)
	switch {
	case version == Rev20260728:
		return version, progressToken, nil
	case version > Rev20260728:
		return "", nil, unsupportedRevision(version)
	}
	return m.revision, progressToken, nil
}

// initialize negotiates the revision and describes the server.
func (m *session) initialize(params json.RawMessage) (any, error) {
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
	m.revision = rev
	return initializeResult{ProtocolVersion: rev, ServerInfo: m.info}, nil
}

// handle answers tools/list or tools/call on a worker.
func (m *session) handle(c *call) (any, error) {
	if firstByte(c.params) == '[' {
		return nil, fmt.Errorf("%w: params must be an object", ErrInvalidParams)
	}
	if c.method == "tools/list" {
		return m.listTools(c)
	}
	return m.callTool(c)
}

// statelessFor returns the stateless fields for a result under rev (none before
// the stateless revision).
func (m *session) statelessFor(rev string) stateless {
	if !isStateless(rev) {
		return stateless{}
	}
	return stateless{ResultType: "complete", Meta: &statelessMeta{ServerInfo: m.info}}
}
