package agents

import (
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/tailscale/hujson"
)

// jsonStyle is how a JSON file writes its members, which the member vx adds follows: the
// indentation, the spacing around a colon and after a comma, and whether objects and arrays are
// written a member a line.
type jsonStyle struct {
	// unit is one level of indentation: a tab, or the spaces of the root's members.
	unit string
	// colon is what stands between a name and its value (": ", ":", " : ").
	colon string
	// comma is what follows a comma between members written on one line (", " or ",").
	comma string
	// expanded is true when the root object is written a member a line.
	expanded bool
	// inlineArrays is true when the file writes an array with elements on one line.
	inlineArrays bool
}

// inlineArray finds an array written on one line with an element: "[" then, on its line, a value.
var inlineArray = regexp.MustCompile(`\[[ \t]*[^\s\]/]`)

// styleOf reads the style of old, whose parsed root object is root.
func styleOf(old []byte, root *hujson.Object) jsonStyle {
	s := jsonStyle{unit: "  ", colon: ": ", comma: ", ", inlineArrays: inlineArray.Match(old)}
	if len(root.Members) == 0 {
		return s
	}
	first := root.Members[0]
	if indent, ok := lineIndent(string(first.Name.BeforeExtra)); ok {
		s.expanded = true
		if strings.HasPrefix(indent, "\t") {
			s.unit = "\t"
		} else if indent != "" {
			s.unit = indent
		}
	}
	before, after := string(first.Name.AfterExtra), string(first.Value.BeforeExtra)
	if blank(before) && blank(after) {
		s.colon = before + ":" + after
	}
	if s.expanded {
		// A one-line object elsewhere in the file says how its commas are spaced.
		s.comma = ", "
		if strings.Contains(string(old), `,"`) && !strings.Contains(string(old), `, "`) {
			s.comma = ","
		}
	} else if len(root.Members) > 1 {
		if sep := string(root.Members[1].Name.BeforeExtra); blank(sep) {
			s.comma = "," + sep
		}
	}
	return s
}

// lineIndent is what follows the last newline of extra; ok is false where it has none.
func lineIndent(extra string) (indent string, ok bool) {
	i := strings.LastIndex(extra, "\n")
	if i < 0 {
		return "", false
	}
	return extra[i+1:], true
}

// blank reports whether s is spaces and tabs only.
func blank(s string) bool { return strings.Trim(s, " \t") == "" }

// expandedIn says whether an object put into obj is written a member a line: as obj's last
// object member with members is, else as obj itself is, else (an empty obj) as the root is.
// Arrays follow inlineArrays.
func (s jsonStyle) expandedIn(obj *hujson.Object) bool {
	for i := len(obj.Members) - 1; i >= 0; i-- {
		if c, ok := obj.Members[i].Value.Value.(*hujson.Object); ok && len(c.Members) > 0 {
			return strings.Contains(obj.Members[i].Value.String(), "\n")
		}
	}
	if len(obj.Members) > 0 {
		_, ok := lineIndent(string(obj.Members[0].Name.BeforeExtra))
		return ok
	}
	return s.expanded
}

// render writes v (the decoded JSON of vx's entry: objects, arrays, strings) in the style: a
// member a line at indent+unit where expanded, else on one line; an object's keys in the order
// type, command, args, then the rest sorted.
func (s jsonStyle) render(v any, indent string, expanded bool) string {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return "{}"
		}
		var parts []string
		for _, k := range entryKeys(x) {
			name, _ := json.Marshal(k)
			parts = append(parts, string(name)+s.colon+s.render(x[k], indent+s.unit, expanded))
		}
		return s.join("{", parts, "}", indent, expanded)
	case []any:
		if len(x) == 0 {
			return "[]"
		}
		var parts []string
		for _, e := range x {
			parts = append(parts, s.render(e, indent+s.unit, expanded))
		}
		return s.join("[", parts, "]", indent, expanded && !s.inlineArrays)
	}
	data, _ := json.Marshal(v) // strings, numbers, booleans, null always encode
	return string(data)
}

// join writes parts between open and close: a part a line at indent+unit, or on one line.
func (s jsonStyle) join(open string, parts []string, close, indent string, expanded bool) string {
	if !expanded {
		return open + strings.Join(parts, s.comma) + close
	}
	inner := indent + s.unit
	return open + "\n" + inner + strings.Join(parts, ",\n"+inner) + "\n" + indent + close
}

// entryKeys orders an object's keys: type, command, args, then the rest sorted.
func entryKeys(m map[string]any) []string {
	var keys, rest []string
	for _, k := range []string{"type", "command", "args"} {
		if _, ok := m[k]; ok {
			keys = append(keys, k)
		}
	}
	for k := range m {
		if !slices.Contains(keys, k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(keys, rest...)
}
