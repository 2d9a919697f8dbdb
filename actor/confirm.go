package actor

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"
)

// Confirmations: a tool about to destroy or run what the workspace did not allow asks the host's
// user first (tool.Call.Confirm). A client that declared form elicitation at initialize is sent
// elicitation/create (2025-06-18) and the call waits for the answer. A stateless client that
// declares elicitation on its request is answered resultType "input_required" with the question,
// and a requestState; it calls again with the same arguments, inputResponses and that state, and
// is answered then. The state is signed with a key of the server's, bound to the tool and its
// arguments, and expires: a client cannot make up a confirmation or move one to another call.

// confirmInput is the key of the confirmation in inputRequests and inputResponses.
const confirmInput = "confirm"

// confirmTTL is how long a stateless client has to answer.
const confirmTTL = 10 * time.Minute

// confirmKey signs the requestState of confirmations; it lives as long as the server.
type confirmKey struct {
	key [32]byte
	now func() time.Time
}

func newConfirmKey() *confirmKey {
	k := &confirmKey{now: time.Now}
	_, _ = rand.Read(k.key[:])
	return k
}

// state is the requestState of a confirmation of toolName called with args, valid until expires.
func (k *confirmKey) state(toolName string, args json.RawMessage, expires time.Time) string {
	var exp [8]byte
	binary.BigEndian.PutUint64(exp[:], uint64(expires.Unix()))
	return base64.RawURLEncoding.EncodeToString(append(exp[:], k.mac(toolName, args, exp[:])...))
}

func (k *confirmKey) mac(toolName string, args json.RawMessage, exp []byte) []byte {
	h := hmac.New(sha256.New, k.key[:])
	h.Write(exp)
	h.Write([]byte(toolName))
	h.Write([]byte{0})
	var compact bytes.Buffer
	if json.Compact(&compact, args) != nil {
		compact.Reset()
		compact.Write(args)
	}
	h.Write(compact.Bytes())
	return h.Sum(nil)
}

// valid reports whether state was made by this server for toolName with args and has not expired.
func (k *confirmKey) valid(state, toolName string, args json.RawMessage) bool {
	raw, err := base64.RawURLEncoding.DecodeString(state)
	if err != nil || len(raw) != 8+sha256.Size {
		return false
	}
	if time.Unix(int64(binary.BigEndian.Uint64(raw[:8])), 0).Before(k.now()) {
		return false
	}
	return hmac.Equal(raw[8:], k.mac(toolName, args, raw[:8]))
}

// confirmFunc is c's tool.Call.Confirm: nil where its client can be asked nothing.
func (m *session) confirmFunc(c *call, toolName string, args json.RawMessage, p *callParams) func(context.Context, string) (bool, error) {
	if !c.caps.elicit {
		return nil
	}
	if isStateless(c.revision) {
		return func(_ context.Context, message string) (bool, error) {
			if answer, ok := p.InputResponses[confirmInput]; ok && m.confirms.valid(p.RequestState, toolName, args) {
				return accepted(answer), nil
			}
			state := m.confirms.state(toolName, args, m.confirms.now().Add(confirmTTL))
			return false, &inputRequired{message: m.mask(message), state: state}
		}
	}
	rev := c.revision
	return func(ctx context.Context, message string) (bool, error) {
		params := elicitParams{Message: m.mask(message), RequestedSchema: confirmSchema}
		if rev >= Rev20251125 {
			params.Mode = "form"
		}
		res, err := c.conn.request(ctx, "elicitation/create", params)
		if err != nil {
			return false, fmt.Errorf("asking the user to confirm: %w", err)
		}
		return accepted(res), nil
	}
}

// confirmSchema asks nothing but the answer itself: accept, decline or cancel.
var confirmSchema = json.RawMessage(`{"type":"object","properties":{}}`)

type elicitParams struct {
	Mode            string          `json:"mode,omitempty"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
}

// accepted reports whether an elicitation's result says accept.
func accepted(result json.RawMessage) bool {
	var r struct {
		Action string `json:"action"`
	}
	return json.Unmarshal(result, &r) == nil && r.Action == "accept"
}

// inputRequired is the error a stateless call's Confirm answers before the client confirmed: the
// call is answered with the question (result) rather than as the tool's error.
type inputRequired struct {
	message, state string
}

func (e *inputRequired) Error() string { return "waiting for the user to confirm: " + e.message }

// result is the input_required result asking the question.
func (e *inputRequired) result() inputRequiredResult {
	r := inputRequiredResult{ResultType: "input_required", RequestState: e.state, InputRequests: map[string]inputRequest{}}
	r.InputRequests[confirmInput] = inputRequest{Method: "elicitation/create",
		Params: elicitParams{Mode: "form", Message: e.message, RequestedSchema: confirmSchema}}
	return r
}

type inputRequiredResult struct {
	ResultType    string                  `json:"resultType"`
	InputRequests map[string]inputRequest `json:"inputRequests"`
	RequestState  string                  `json:"requestState"`
}

type inputRequest struct {
	Method string       `json:"method"`
	Params elicitParams `json:"params"`
}
