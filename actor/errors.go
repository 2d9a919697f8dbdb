package actor

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Error is a JSON-RPC error object. Errors are matched by code: errors.Is(err,
// ErrInvalidParams) holds for any *Error with code -32602, whatever its message, so
// a handler writes fmt.Errorf("%w: unknown tool %q", ErrInvalidParams, name) and the
// server answers code -32602 with the whole text as message.
type Error struct {
	// Code is the JSON-RPC error code.
	Code int64
	// Message is the one-sentence description sent on the wire.
	Message string
	// Data is optional structured detail (e.g. the supported protocol versions).
	Data json.RawMessage
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// The JSON-RPC and MCP errors the server answers.
var (
	// ErrParse (-32700): the frame is not JSON. Answered with id null.
	ErrParse = &Error{Code: -32700, Message: "parse error"}
	// ErrInvalidRequest (-32600): valid JSON outside the JSON-RPC 2.0 envelope,
	// an empty batch, a duplicate in-flight id, or an oversize line.
	ErrInvalidRequest = &Error{Code: -32600, Message: "invalid request"}
	// ErrMethodNotFound (-32601): a method the server does not implement.
	ErrMethodNotFound = &Error{Code: -32601, Message: "method not found"}
	// ErrInvalidParams (-32602): params the method cannot take: an unknown tool,
	// arguments that are not an object, an invalid cursor.
	ErrInvalidParams = &Error{Code: -32602, Message: "invalid params"}
	// ErrInternal (-32603): the server failed, e.g. a tool panicked (recovered).
	ErrInternal = &Error{Code: -32603, Message: "internal error"}
	// ErrUnsupportedProtocolVersion (-32022): a request's
	// _meta["io.modelcontextprotocol/protocolVersion"] names a revision the server
	// does not speak; data lists the supported ones.
	ErrUnsupportedProtocolVersion = &Error{Code: -32022, Message: "unsupported protocol version"}
)

// wireError converts err into the error object sent for it: the code of the
// *Error it wraps (-32603 when none) and its whole text, masked.
func wireError(err error, mask func(string) string) *Error {
	var e *Error
	if !errors.As(err, &e) {
		e = ErrInternal
		err = fmt.Errorf("%w: %v", ErrInternal, err)
	}
	return &Error{Code: e.Code, Message: mask(err.Error()), Data: e.Data}
}
