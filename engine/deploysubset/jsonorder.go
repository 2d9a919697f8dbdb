package deploysubset

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// member is one key and value of a JSON object, the value as written.
type member struct {
	key string
	raw json.RawMessage
}

// readObject reads a JSON object's members in their order.
func readObject(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("read %q: %w", key, err)
		}
		out = append(out, member{key, raw})
	}
	return out, nil
}

// writeObject writes members as one object, compact.
func writeObject(members []member) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := writeString(&b, m.key); err != nil {
			return nil, err
		}
		b.WriteByte(':')
		if err := json.Compact(&b, m.raw); err != nil {
			return nil, fmt.Errorf("write %q: %w", m.key, err)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// writeString writes s as a JSON string, as JavaScript's JSON.stringify does (no HTML escapes).
func writeString(b *bytes.Buffer, s string) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}

// indentJSON formats a compact document as JSON.stringify(doc, null, indent) and a newline.
func indentJSON(compact []byte, indent string) ([]byte, error) {
	var b bytes.Buffer
	if err := json.Indent(&b, compact, "", indent); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// withoutMember answers members without the one named key.
func withoutMember(members []member, key string) []member {
	out := members[:0:0]
	for _, m := range members {
		if m.key != key {
			out = append(out, m)
		}
	}
	return out
}

// dropTopKey removes a top-level key from a JSON object document, keeping the rest of the text
// as written, and reports whether it was there.
func dropTopKey(data []byte, key string) ([]byte, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return nil, false, err
	}
	prevEnd := dec.InputOffset() // just past '{' or the previous value
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false, err
		}
		end := dec.InputOffset()
		if k, _ := tok.(string); k == key {
			return cutMember(data, int(prevEnd), int(end)), true, nil
		}
		prevEnd = end
	}
	return data, false, nil
}

// cutMember removes the member whose text lies between start (just past the previous value or
// '{') and end (just past its value), with the comma that separated it.
func cutMember(data []byte, start, end int) []byte {
	rest := data[end:]
	trimmed := bytes.TrimLeft(rest, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == ',' {
		// A following member: drop from the start of this one's line through the comma.
		after := end + (len(rest) - len(trimmed)) + 1
		lead := bytes.TrimLeft(data[start:end], ", \t\r\n")
		from := end - len(lead)
		return append(append([]byte{}, data[:from]...), bytes.TrimLeft(data[after:], " \t\r\n")...)
	}
	// The last member: its text from start holds the comma before it.
	return append(append([]byte{}, data[:start]...), data[end:]...)
}
