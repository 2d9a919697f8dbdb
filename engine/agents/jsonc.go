package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/tailscale/hujson"
)

// jsonServer sets the member vx of the object under key to entry in a JSON or JSONC file, keeping
// every other key, server and comment. A file whose entry already equals entry is left byte for
// byte; a file that was formatted as hujson formats is formatted again, else only the new member
// is written, on a line of its own where its siblings are.
//
// Where a name appears twice in an object, the last one is edited: every host reads the last
// (Claude Code and Gemini CLI with JSON.parse, VS Code and Cursor with jsonc-parser). The new text
// is parsed back and must hold entry under key.vx and, apart from it, exactly what the old text
// held; else the edit is refused.
func jsonServer(key string, entry map[string]any) edit {
	return func(old []byte) ([]byte, error) {
		if len(bytes.TrimSpace(old)) == 0 {
			return marshal(map[string]any{key: map[string]any{"vx": entry}})
		}
		before, err := decodeJSON(old)
		if err != nil {
			return nil, err
		}
		if reflect.DeepEqual(vxOf(before, key), normalize(entry)) {
			return old, nil
		}
		text, err := setServer(old, key, entry)
		if err != nil {
			return nil, err
		}
		if err := checkJSON(before, text, key, entry); err != nil {
			return nil, fmt.Errorf("the merged file would not read back as intended (%w); left as it was", err)
		}
		return text, nil
	}
}

// decodeJSON parses a JSON or JSONC file as the hosts do: comments and trailing commas allowed,
// the last of two equal names winning.
func decodeJSON(data []byte) (map[string]any, error) {
	v, err := hujson.Parse(bytes.Clone(data))
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	v.Standardize()
	var doc map[string]any
	if err := json.Unmarshal(v.Pack(), &doc); err != nil {
		return nil, fmt.Errorf("want a JSON object: %w", err)
	}
	if doc == nil {
		return nil, errors.New("want a JSON object, not null")
	}
	return doc, nil
}

// vxOf is doc[key]["vx"], nil where there is none.
func vxOf(doc map[string]any, key string) any {
	servers, _ := doc[key].(map[string]any)
	return servers["vx"]
}

// withoutVX is doc without key.vx (and without key where vx was all it held or it was null).
func withoutVX(doc map[string]any) func(key string) map[string]any {
	return func(key string) map[string]any {
		out := map[string]any{}
		for k, v := range doc {
			out[k] = v
		}
		servers, ok := doc[key].(map[string]any)
		if !ok {
			delete(out, key)
			return out
		}
		rest := map[string]any{}
		for k, v := range servers {
			if k != "vx" {
				rest[k] = v
			}
		}
		out[key] = rest
		if len(rest) == 0 {
			delete(out, key)
		}
		return out
	}
}

// checkJSON parses text back and checks it holds entry under key.vx and otherwise what before held.
func checkJSON(before map[string]any, text []byte, key string, entry map[string]any) error {
	after, err := decodeJSON(text)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(vxOf(after, key), normalize(entry)) {
		return fmt.Errorf("%s.vx is not vx's entry", key)
	}
	if !reflect.DeepEqual(withoutVX(before)(key), withoutVX(after)(key)) {
		return errors.New("another member changed")
	}
	return nil
}

// setServer edits the syntax tree of old: the last member vx of the last member key of the root
// object gets entry as its value, or is added; comments stay where they were. What vx writes
// follows the file's own style (styleOf): its indentation, its colon and comma spacing, and
// objects a member a line where the file writes them so.
func setServer(old []byte, key string, entry map[string]any) ([]byte, error) {
	v, err := hujson.Parse(bytes.Clone(old))
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	wasFormatted := bytes.Equal(formatted(old), old)
	root, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, errors.New("want a JSON object")
	}
	style := styleOf(old, root)
	value := normalize(entry)
	wrapped := map[string]any{"vx": value}
	rootIndent := memberIndent(root, style.unit)
	i := lastMember(root, key)
	switch {
	case i < 0:
		err = addMember(root, key, style.render(wrapped, rootIndent, style.expandedIn(root)), style, rootIndent)
	case isNull(root.Members[i].Value):
		indent := ownIndent(root.Members[i], rootIndent)
		err = setValue(&root.Members[i].Value, []byte(style.render(wrapped, indent, style.expandedIn(root))))
	default:
		servers, isObject := root.Members[i].Value.Value.(*hujson.Object)
		if !isObject {
			return nil, fmt.Errorf("%s is not an object", key)
		}
		indent := memberIndent(servers, ownIndent(root.Members[i], rootIndent)+style.unit)
		text := style.render(value, indent, style.expandedIn(servers))
		if j := lastMember(servers, "vx"); j >= 0 {
			text = style.render(value, ownIndent(servers.Members[j], indent), style.expandedIn(servers))
			err = setValue(&servers.Members[j].Value, []byte(text))
		} else {
			err = addMember(servers, "vx", text, style, indent)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("set %s.vx: %w", key, err)
	}
	if wasFormatted {
		v.Format()
	}
	return v.Pack(), nil
}

// lastMember is the index of the last member of obj named name, -1 where there is none.
func lastMember(obj *hujson.Object, name string) int {
	for i := len(obj.Members) - 1; i >= 0; i-- {
		if lit, ok := obj.Members[i].Name.Value.(hujson.Literal); ok && lit.String() == name {
			return i
		}
	}
	return -1
}

// isNull reports whether v is the literal null.
func isNull(v hujson.Value) bool {
	lit, ok := v.Value.(hujson.Literal)
	return ok && lit.Kind() == 'n'
}

// setValue replaces v's value with the JSON text value, keeping the comments around it.
func setValue(v *hujson.Value, value []byte) error {
	parsed, err := hujson.Parse(value)
	if err != nil {
		return err
	}
	v.Value = parsed.Value
	return nil
}

// addMember appends the member name: value to obj, its colon spaced as style says. The comment
// that ended the old last member's line stays on that line (after the comma it now needs), and
// the new member goes on a line of its own at indent; in an object written on one line it
// follows on that line. In an empty object of a file written a member a line, it goes on a line
// of its own, and the closing brace on the next.
func addMember(obj *hujson.Object, name, value string, style jsonStyle, indent string) error {
	parsed, err := hujson.Parse([]byte(value))
	if err != nil {
		return err
	}
	beforeColon, afterColon, _ := strings.Cut(style.colon, ":")
	member := hujson.ObjectMember{
		Name:  hujson.Value{Value: hujson.String(name), AfterExtra: hujson.Extra(beforeColon)},
		Value: hujson.Value{BeforeExtra: hujson.Extra(afterColon), Value: parsed.Value},
	}
	n := len(obj.Members)
	if n == 0 {
		if style.expanded && blank(string(obj.AfterExtra)) {
			member.Name.BeforeExtra = hujson.Extra("\n" + indent)
			obj.AfterExtra = hujson.Extra("\n" + strings.TrimSuffix(indent, style.unit))
		}
		obj.Members = append(obj.Members, member)
		return nil
	}
	tail := string(obj.AfterExtra)
	cut := lineEnd(tail)
	switch {
	case cut < 0:
		// One line: the comment stays before the comma, the new member follows.
		obj.Members[n-1].Value.AfterExtra = hujson.Extra(tail)
		member.Name.BeforeExtra = hujson.Extra(strings.TrimPrefix(style.comma, ","))
		obj.AfterExtra = nil
	default:
		member.Name.BeforeExtra = hujson.Extra(tail[:cut] + "\n" + indent)
		obj.AfterExtra = hujson.Extra(tail[cut:])
	}
	obj.Members = append(obj.Members, member)
	return nil
}

// lineEnd is the offset of the first newline of extra that is not inside a block comment, -1 where
// there is none: what comes before it ends the last member's line.
func lineEnd(extra string) int {
	for i := 0; i < len(extra); i++ {
		switch {
		case extra[i] == '\n':
			return i
		case strings.HasPrefix(extra[i:], "//"):
			j := strings.IndexByte(extra[i:], '\n')
			if j < 0 {
				return -1
			}
			return i + j
		case strings.HasPrefix(extra[i:], "/*"):
			j := strings.Index(extra[i+2:], "*/")
			if j < 0 {
				return -1
			}
			i += 2 + j + 1
		}
	}
	return -1
}

// memberIndent is the indentation of obj's members: what follows the last newline before its
// last member's name; fallback where it has none.
func memberIndent(obj *hujson.Object, fallback string) string {
	if len(obj.Members) == 0 {
		return fallback
	}
	return ownIndent(obj.Members[len(obj.Members)-1], fallback)
}

// ownIndent is the indentation of the line m's name is on; fallback where m follows another
// member on its line.
func ownIndent(m hujson.ObjectMember, fallback string) string {
	if indent, ok := lineIndent(string(m.Name.BeforeExtra)); ok {
		return indent
	}
	return fallback
}

// formatted is data as hujson formats it (nil when it does not parse).
func formatted(data []byte) []byte {
	out, err := hujson.Format(bytes.Clone(data))
	if err != nil {
		return nil
	}
	return out
}

// normalize is v as encoding/json decodes it, for comparing with a decoded file.
func normalize(v any) any {
	data, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(data, &out)
	return out
}

// marshal is doc as indented JSON with a final newline.
func marshal(doc any) ([]byte, error) {
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}
