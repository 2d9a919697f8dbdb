package window

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// Question is what a cursor is bound to: a tool and the arguments of the call, the cursor aside.
type Question struct {
	// Tool is the tool's name.
	Tool string
	// Args is the call's arguments, a JSON object.
	Args json.RawMessage
}

// hash is a short digest of the question: the tool and its arguments in a canonical form (keys
// sorted, the cursor left out), so that the same question spelled differently keeps its cursors.
func (q Question) hash() string {
	var args map[string]any
	_ = json.Unmarshal(q.Args, &args)
	delete(args, "cursor")
	canon, _ := json.Marshal(args)
	sum := sha256.Sum256(append([]byte(q.Tool+"\x00"), canon...))
	return fmt.Sprintf("%x", sum[:8])
}

// cursor is what a cursor holds: the question's digest, the whole answer's fingerprint, and how
// far each list has been answered.
type cursor struct {
	V int    `json:"v"`
	Q string `json:"q"`
	F string `json:"f"`
	O []int  `json:"o"`
}

const cursorVersion = 1

func encodeCursor(c cursor) string {
	c.V = cursorVersion
	js, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(js)
}

func decodeCursor(s string) (cursor, error) {
	var c cursor
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(raw, &c) != nil || c.V != cursorVersion || c.Q == "" || c.F == "" {
		return cursor{}, &CursorError{Msg: "argument \"cursor\" is not a cursor this server gave: pass the nextCursor of an earlier answer unchanged"}
	}
	return c, nil
}

// CursorError is the refusal of a cursor: malformed, stale, or given for another question. Its
// message is one line naming the cursor.
type CursorError struct {
	// Msg is the refusal's message.
	Msg string
}

func (e *CursorError) Error() string { return e.Msg }
