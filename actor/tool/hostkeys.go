package tool

import (
	"bytes"
	"encoding/json"
	"slices"
)

// hostKeys are the argument keys a known host adds to every tool it shows its model, for its
// own use, and passes through to the server: they are the host's, not the agent's question, so
// Tool.Call removes them before decoding, whatever their value, and no tool sees them. Every
// other key a tool does not take is still refused by name. docs/mcp.md lists them.
var hostKeys = []string{
	// Gemini CLI (0.61) asks its model whether a call waits for the previous one.
	"wait_for_previous",
}

// dropHostKeys answers the arguments object raw without its host key members, the others in their
// order, byte for byte (duplicates included, which Decode then refuses). raw without a host key,
// or that is not a valid object, is answered as it is.
func dropHostKeys(raw json.RawMessage) json.RawMessage {
	if !hasHostKey(raw) {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return raw
	}
	out := []byte{'{'}
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			return raw
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return raw
		}
		if slices.Contains(hostKeys, key) {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		name, _ := json.Marshal(key)
		out = append(append(append(out, name...), ':'), value...)
	}
	if _, err := dec.Token(); err != nil {
		return raw
	}
	return append(out, '}')
}

// hasHostKey reports whether the object raw has a host key member at its top level.
func hasHostKey(raw json.RawMessage) bool {
	// A key is in the bytes as it is unless an escape spells it: without a backslash, a key not
	// among the bytes is not a member, and the object need not be decoded.
	if bytes.IndexByte(raw, '\\') < 0 && !slices.ContainsFunc(hostKeys, func(k string) bool { return bytes.Contains(raw, []byte(k)) }) {
		return false
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		return false
	}
	for _, k := range hostKeys {
		if _, ok := members[k]; ok {
			return true
		}
	}
	return false
}
