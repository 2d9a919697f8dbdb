package agents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/tailscale/hujson"
)

// jsonServer sets the member vx of the object under key to entry in a JSON or JSONC file, keeping
// every other key, server and comment. A file whose entry already equals entry is left byte for
// byte; a file that was formatted as hujson formats is formatted again, else only the new member
// is written compactly.
func jsonServer(key string, entry map[string]any) edit {
	return func(old []byte) ([]byte, error) {
		if len(bytes.TrimSpace(old)) == 0 {
			return marshal(map[string]any{key: map[string]any{"vx": entry}})
		}
		v, err := hujson.Parse(bytes.Clone(old))
		if err != nil {
			return nil, fmt.Errorf("parse: %w", err)
		}
		var doc map[string]any
		std := v.Clone()
		std.Standardize()
		if err := json.Unmarshal(std.Pack(), &doc); err != nil {
			return nil, fmt.Errorf("want a JSON object: %w", err)
		}
		servers, has := doc[key]
		value, err := inline(entry)
		if err != nil {
			return nil, err
		}
		path := "/" + key + "/vx"
		switch m, isObject := servers.(map[string]any); {
		case has && isObject:
			if reflect.DeepEqual(m["vx"], normalize(entry)) {
				return old, nil
			}
		case has && servers != nil:
			return nil, fmt.Errorf("%s is not an object", key)
		default:
			value = []byte(`{"vx": ` + string(value) + `}`)
			path = "/" + key
		}
		patch := []byte(`[{"op": "add", "path": "` + path + `", "value": ` + string(value) + `}]`)
		wasFormatted := bytes.Equal(formatted(old), old)
		if err := v.Patch(patch); err != nil {
			return nil, fmt.Errorf("set %s.vx: %w", key, err)
		}
		if wasFormatted {
			v.Format()
		} else {
			indentMember(&v, key)
		}
		return v.Pack(), nil
	}
}

// inline is entry on one line, its keys in the order type, command, args, then the rest sorted.
func inline(entry map[string]any) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	var keys, rest []string
	for _, k := range []string{"type", "command", "args"} {
		if _, ok := entry[k]; ok {
			keys = append(keys, k)
		}
	}
	for k := range entry {
		if !slices.Contains(keys, k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	keys = append(keys, rest...)
	for i, k := range keys {
		val, err := json.Marshal(entry[k])
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q: %s", k, val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// indentMember puts the member the patch added (key.vx, else key) on a line of its own, indented as
// its siblings are, so a hand-formatted file reads as if a person had added it.
func indentMember(v *hujson.Value, key string) {
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return
	}
	place := func(obj *hujson.Object, name string) {
		n := len(obj.Members)
		if n == 0 || obj.Members[n-1].Name.Value.(hujson.Literal).String() != name {
			return
		}
		indent := "  "
		if n > 1 {
			prev := string(obj.Members[n-2].Name.BeforeExtra)
			if i := strings.LastIndex(prev, "\n"); i >= 0 {
				indent = prev[i+1:]
			}
		}
		obj.Members[n-1].Name.BeforeExtra = hujson.Extra("\n" + indent)
		obj.Members[n-1].Value.BeforeExtra = hujson.Extra(" ")
	}
	for _, m := range obj.Members {
		if m.Name.Value.(hujson.Literal).String() == key {
			if inner, ok := m.Value.Value.(*hujson.Object); ok && len(inner.Members) > 1 {
				place(inner, "vx")
				return
			}
		}
	}
	place(obj, key)
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
