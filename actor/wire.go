package actor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// message is one JSON-RPC request or notification as the server reads it.
type message struct {
	id     json.RawMessage // nil for a notification
	method string
	params json.RawMessage // nil when absent or null; otherwise an object or an array
}

// wireMessage is the envelope a frame is decoded into before it is checked.
type wireMessage struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// firstByte returns the first non-whitespace byte of b, or 0 when there is none.
func firstByte(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
		default:
			return c
		}
	}
	return 0
}

// blank reports whether b holds only JSON whitespace: a line between frames. A NUL byte is not
// whitespace (firstByte answers 0 for it as for nothing at all).
func blank(b []byte) bool {
	return len(bytes.TrimLeft(b, " \t\r\n")) == 0
}

// validID reports whether raw is a JSON string or number, the ids MCP allows, in valid UTF-8: an
// id is echoed byte for byte, and a reply must be valid UTF-8 to be JSON.
func validID(raw json.RawMessage) bool {
	switch c := firstByte(raw); {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return utf8.Valid(raw)
	}
	return false
}

// idKey is the in-flight key of a request id: a string id and a number id never
// collide, and a number is keyed by its value (7 and 7.0 are the same request).
func idKey(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		// Decoding turns each lone surrogate into U+FFFD: such an id is keyed as written, so
		// that "\ud800" and "\udbff" stay two requests.
		var s string
		if json.Unmarshal(raw, &s) == nil && !strings.ContainsRune(s, utf8.RuneError) {
			return "s" + s
		}
		return "r" + string(raw)
	}
	if i, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return "n" + strconv.FormatInt(i, 10)
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
		return "n" + strconv.FormatFloat(f, 'g', -1, 64)
	}
	return "r" + string(raw)
}

// parseMessage checks one JSON value against the JSON-RPC 2.0 envelope. It
// returns the message, or a reply error with the id when the id could be read
// (null otherwise), or ok=false for a response, which the server never asked
// for and ignores.
func parseMessage(raw json.RawMessage) (msg message, id json.RawMessage, rerr error, ok bool) {
	if firstByte(raw) != '{' {
		if json.Valid(raw) {
			return msg, nil, fmt.Errorf("%w: a message must be a JSON object", ErrInvalidRequest), true
		}
		return msg, nil, fmt.Errorf("%w: not JSON", ErrParse), true
	}
	var w wireMessage
	if err := json.Unmarshal(raw, &w); err != nil {
		if json.Valid(raw) {
			return msg, nil, fmt.Errorf("%w: %v", ErrInvalidRequest, err), true
		}
		return msg, nil, fmt.Errorf("%w: not JSON", ErrParse), true
	}
	if w.ID != nil && !utf8.Valid(w.ID) {
		return msg, nil, fmt.Errorf(`%w: "id" is not valid UTF-8`, ErrInvalidRequest), true
	}
	if w.ID != nil && validID(w.ID) {
		id = w.ID
	}
	var version string
	if json.Unmarshal(w.JSONRPC, &version) != nil || version != "2.0" {
		return msg, id, fmt.Errorf(`%w: "jsonrpc" must be "2.0"`, ErrInvalidRequest), true
	}
	if w.Method == nil {
		if w.Result != nil || w.Error != nil {
			return msg, nil, nil, false
		}
		return msg, id, fmt.Errorf(`%w: "method" is missing`, ErrInvalidRequest), true
	}
	if json.Unmarshal(w.Method, &msg.method) != nil || firstByte(w.Method) != '"' {
		return msg, id, fmt.Errorf(`%w: "method" must be a string`, ErrInvalidRequest), true
	}
	if w.ID != nil && id == nil {
		return msg, nil, fmt.Errorf(`%w: "id" must be a string or a number`, ErrInvalidRequest), true
	}
	msg.id = id
	switch firstByte(w.Params) {
	case 0:
	case 'n': // null: the same as no params
	case '{', '[':
		msg.params = w.Params
	default:
		return msg, id, fmt.Errorf(`%w: "params" must be an object`, ErrInvalidRequest), true
	}
	return msg, id, nil, true
}

var nullID = json.RawMessage("null")

// appendResult appends the reply {"jsonrpc":"2.0","id":id,"result":result}.
func appendResult(dst []byte, id, result json.RawMessage) []byte {
	dst = appendResultHead(dst, id)
	dst = append(dst, result...)
	return append(dst, '}')
}

// appendResultHead appends a reply up to its result: {"jsonrpc":"2.0","id":id,"result":
func appendResultHead(dst []byte, id json.RawMessage) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, orNull(id)...)
	return append(dst, `,"result":`...)
}

// appendError appends the error reply for e with id (null when nil).
func appendError(dst []byte, id json.RawMessage, e *Error) []byte {
	obj := struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	}{e.Code, e.Message, e.Data}
	b, err := json.Marshal(obj)
	if err != nil { // only Data can fail, and the server builds it: drop it
		obj.Data = nil
		b, _ = json.Marshal(obj)
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, orNull(id)...)
	dst = append(dst, `,"error":`...)
	dst = append(dst, b...)
	return append(dst, '}')
}

// appendNotification appends the notification {"jsonrpc":"2.0","method":…,"params":…}.
func appendNotification(dst []byte, method string, params json.RawMessage) []byte {
	m, _ := json.Marshal(method)
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst = append(dst, m...)
	dst = append(dst, `,"params":`...)
	dst = append(dst, params...)
	return append(dst, '}')
}

func orNull(id json.RawMessage) json.RawMessage {
	if id == nil {
		return nullID
	}
	return bytes.TrimSpace(id)
}
