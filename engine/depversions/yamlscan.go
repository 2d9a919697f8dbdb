package depversions

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// The YAML library is slow on a large pnpm-lock.yaml (figures: docs/performance.md, "Answers and
// records"); lockfile writers use a small, regular part of YAML (block mappings and sequences,
// one-line scalars, one-line flow collections), which this file reads without it. It is a scanner
// of that subset only: on anything else — block scalars, anchors, tags, multi-line scalars,
// explicit keys, escapes, unusual characters — it answers errNotSubset and the caller decodes the
// file with the YAML library instead. Where it answers, it answers what the library would (FuzzRead
// checks this), so the fallback is never a second meaning.

// errNotSubset reports YAML outside the scanned subset.
var errNotSubset = errors.New("YAML outside the scanned subset")

// maxKeyBytes bounds a key's length: the YAML library refuses implicit keys over 1024 characters.
const maxKeyBytes = 1000

// yline is one significant line (blank and comment lines are dropped). A sequence entry with
// content on its line ("- a: 1") is two ylines: the item, then its content at the content's column.
type yline struct {
	indent int
	item   bool // a "- " sequence entry
	key    string
	kind   valueKind
	value  string // the decoded scalar, for kind scalar
}

type valueKind uint8

const (
	vBlock    valueKind = iota // nothing after the key or dash: a block value or null follows
	vScalar                    // a plain or quoted scalar
	vNull                      // a plain null
	vEmptyMap                  // {}
	vFlow                      // any other one-line flow collection, not decoded
)

// yamlDocs splits text into its documents' significant lines. A document that is empty, a
// directive, a document end marker or content after "---" is outside the subset.
func yamlDocs(text string) ([][]yline, error) {
	// A tab is legal in few places; reading none keeps every line's indentation plain spaces.
	if strings.IndexByte(text, '\t') >= 0 || !yamlPrintable(text) {
		return nil, errNotSubset
	}
	hasCR := strings.IndexByte(text, '\r') >= 0
	var docs [][]yline
	cur := make([]yline, 0, strings.Count(text, "\n")+1)
	empty := true     // cur holds no line yet
	explicit := false // cur was opened by "---"
	for len(text) > 0 {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		if hasCR {
			line = strings.TrimSuffix(line, "\r")
			if strings.IndexByte(line, '\r') >= 0 {
				return nil, errNotSubset // a lone CR breaks lines too
			}
		}
		if line == "" {
			continue
		}
		if c := line[0]; c == '-' || c == '.' || c == '%' {
			if strings.HasPrefix(line, "---") || strings.HasPrefix(line, "...") || c == '%' {
				if strings.TrimRight(line, " ") != "---" || empty && explicit {
					return nil, errNotSubset // a directive, an end marker, content after ---, an empty document
				}
				if !empty {
					docs = append(docs, cur)
					cur = nil
				}
				empty, explicit = true, true
				continue
			}
		}
		indent := 0
		for indent < len(line) && line[indent] == ' ' {
			indent++
		}
		body := line[indent:]
		if body == "" || body[0] == '#' {
			continue
		}
		var err error
		if cur, err = appendLine(cur, indent, body); err != nil {
			return nil, err
		}
		empty = false
	}
	if empty {
		return nil, errNotSubset // no document, or an empty last one
	}
	return append(docs, cur), nil
}

// appendLine tokenizes one line's body (its text after the indentation).
func appendLine(lines []yline, indent int, body string) ([]yline, error) {
	if body == "-" || strings.HasPrefix(body, "- ") {
		lines = append(lines, yline{indent: indent, item: true})
		rest := strings.TrimLeft(body[1:], " ")
		if rest == "" || rest[0] == '#' {
			return lines, nil
		}
		if _, _, isKey, err := splitKey(rest); err != nil {
			return nil, err
		} else if isKey {
			return appendLine(lines, indent+len(body)-len(rest), rest)
		}
		item := &lines[len(lines)-1]
		var err error
		item.kind, item.value, err = scanValue(rest)
		return lines, err
	}
	key, rest, isKey, err := splitKey(body)
	if err != nil {
		return nil, err
	}
	if !isKey {
		return nil, errNotSubset // a bare scalar: a continuation line, or not a mapping
	}
	l := yline{indent: indent, key: key}
	if l.kind, l.value, err = scanValue(rest); err != nil {
		return nil, err
	}
	return append(lines, l), nil
}

// splitKey splits "key: rest" (rest after the colon); isKey is false when body is not a mapping
// entry.
func splitKey(body string) (key, rest string, isKey bool, err error) {
	var after string
	switch body[0] {
	case '\'', '"':
		key, after, err = scanQuoted(body)
		if err != nil {
			return "", "", false, err
		}
		after = strings.TrimLeft(after, " ")
		if after != ":" && !strings.HasPrefix(after, ": ") {
			return "", "", false, nil
		}
		rest = after[1:]
	default:
		if isIndicator(body[0]) {
			return "", "", false, errNotSubset
		}
		i := strings.Index(body, ": ")
		switch {
		case i < 0 && strings.HasSuffix(body, ":"):
			i = len(body) - 1
		case i < 0:
			return "", "", false, nil
		}
		key, rest = strings.TrimRight(body[:i], " "), body[i+1:]
		if strings.Contains(key, " #") {
			return "", "", false, errNotSubset
		}
		switch key {
		case "", "<<", "~", "null", "Null", "NULL":
			return "", "", false, errNotSubset
		}
	}
	if len(body)-len(rest) > maxKeyBytes {
		return "", "", false, errNotSubset
	}
	return key, rest, true, nil
}

// scanValue reads what follows a key's colon or an item's dash.
func scanValue(rest string) (valueKind, string, error) {
	rest = strings.TrimLeft(rest, " ")
	if rest == "" || rest[0] == '#' {
		return vBlock, "", nil
	}
	switch c := rest[0]; {
	case c == '\'' || c == '"':
		s, after, err := scanQuoted(rest)
		if err != nil || !blankOrComment(after) {
			return 0, "", errNotSubset
		}
		return vScalar, s, nil
	case c == '{' || c == '[':
		end, err := skipFlow(rest, 0)
		if err != nil || !blankOrComment(rest[end:]) {
			return 0, "", errNotSubset
		}
		if rest[:end] == "{}" {
			return vEmptyMap, "", nil
		}
		return vFlow, "", nil
	case isIndicator(c):
		return 0, "", errNotSubset
	}
	s, _, _ := strings.Cut(rest, " #")
	s = strings.TrimRight(s, " ")
	if strings.Contains(s, ": ") || strings.HasSuffix(s, ":") {
		return 0, "", errNotSubset
	}
	switch s {
	case "~", "null", "Null", "NULL":
		return vNull, "", nil
	}
	return vScalar, s, nil
}

// scanQuoted reads a one-line quoted scalar at the start of s. Double-quoted escapes are outside
// the subset.
func scanQuoted(s string) (value, after string, err error) {
	q := s[0]
	if q == '"' {
		end := strings.IndexByte(s[1:], '"')
		if end < 0 || strings.IndexByte(s[1:end+1], '\\') >= 0 {
			return "", "", errNotSubset
		}
		return s[1 : end+1], s[end+2:], nil
	}
	// '' stands for one quote; b collects the value only when there is one.
	var b strings.Builder
	start := 1
	for i := 1; i < len(s); i++ {
		if s[i] != '\'' {
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteString(s[start : i+1])
			i++
			start = i + 1
			continue
		}
		if start == 1 {
			return s[1:i], s[i+1:], nil
		}
		b.WriteString(s[start:i])
		return b.String(), s[i+1:], nil
	}
	return "", "", errNotSubset
}

// skipFlow checks the one-line flow collection at s[i] and answers the index after it. Entries are
// plain or quoted scalars, "key: value" pairs and nested collections.
func skipFlow(s string, i int) (int, error) {
	closing := byte('}')
	if s[i] == '[' {
		closing = ']'
	}
	i++
	for {
		i = skipSpaces(s, i)
		if i < len(s) && s[i] == closing {
			return i + 1, nil
		}
		var err error
		if i, err = skipFlowScalar(s, i); err != nil {
			return 0, err
		}
		i = skipSpaces(s, i)
		if i+1 < len(s) && s[i] == ':' && s[i+1] == ' ' {
			if i, err = skipFlowScalar(s, skipSpaces(s, i+1)); err != nil {
				return 0, err
			}
			i = skipSpaces(s, i)
		} else if closing == '}' {
			return 0, errNotSubset // a key without a value
		}
		switch {
		case i < len(s) && s[i] == closing:
			return i + 1, nil
		case i+1 < len(s) && s[i] == ',' && s[i+1] == ' ':
			i += 2
		default:
			return 0, errNotSubset
		}
	}
}

// skipFlowScalar skips one flow entry: a nested collection, a quoted or a plain scalar.
func skipFlowScalar(s string, i int) (int, error) {
	if i >= len(s) {
		return 0, errNotSubset
	}
	switch c := s[i]; {
	case c == '{' || c == '[':
		return skipFlow(s, i)
	case c == '\'' || c == '"':
		_, after, err := scanQuoted(s[i:])
		if err != nil {
			return 0, err
		}
		return len(s) - len(after), nil
	case isIndicator(c):
		return 0, errNotSubset
	}
	start := i
	for i < len(s) {
		switch s[i] {
		case ',', '[', ']', '{', '}', '#', '\'', '"':
			if i == start || s[i] == '#' || s[i] == '\'' || s[i] == '"' {
				return 0, errNotSubset
			}
			return i, nil
		case ':':
			if i+1 < len(s) && (s[i+1] == ' ' || strings.IndexByte(",[]{}", s[i+1]) >= 0) {
				return i, nil
			}
		}
		i++
	}
	return i, nil
}

func skipSpaces(s string, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

func blankOrComment(s string) bool {
	t := strings.TrimLeft(s, " ")
	return t == "" || t[0] == '#' && len(t) < len(s)
}

// isIndicator reports whether c, starting a scalar, is a YAML indicator (or starts a construct
// outside the subset).
func isIndicator(c byte) bool {
	return strings.IndexByte("-?:,[]{}#&*!|>'\"%@`", c) >= 0
}

// yamlPrintable reports whether text holds only what the YAML library reads as printable and
// nothing it reads as a line break besides \n and \r\n: no other control characters, no
// invalid UTF-8, no NEL, line or paragraph separator, no byte order mark.
func yamlPrintable(text string) bool {
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\r' && c != '\t' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == utf8.RuneError && size == 1,
			r < 0xA0, r == 0x2028, r == 0x2029, r == 0xFEFF,
			r >= 0xD800 && r < 0xE000, r == 0xFFFE, r == 0xFFFF:
			return false
		}
		i += size
	}
	return true
}

// walker walks a document's lines as block collections. Every walk is bounded by [from, to): the
// lines of one block value, which must all be consumed.
type walker struct{ lines []yline }

// mapping walks the block mapping in lines[from:to], calling f with each entry and the range of
// its own block value (empty for an inline value).
func (w *walker) mapping(from, to int, f func(e *yline, from, to int) error) error {
	n := w.lines[from].indent
	for i := from; i < to; {
		e := &w.lines[i]
		if e.indent != n || e.item {
			return errNotSubset
		}
		j := i + 1
		for j < to && (w.lines[j].indent > n || w.lines[j].indent == n && w.lines[j].item && e.kind == vBlock) {
			j++
		}
		if e.kind != vBlock && j > i+1 {
			return errNotSubset // a multi-line scalar, or content under a scalar
		}
		if err := f(e, i+1, j); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// skip checks the structure of a block value it does not decode.
func (w *walker) skip(from, to int) error {
	if from == to {
		return nil
	}
	if !w.lines[from].item {
		return w.mapping(from, to, func(_ *yline, from, to int) error { return w.skip(from, to) })
	}
	n := w.lines[from].indent
	for i := from; i < to; {
		if w.lines[i].indent != n || !w.lines[i].item {
			return errNotSubset
		}
		j := i + 1
		for j < to && w.lines[j].indent > n {
			j++
		}
		if w.lines[i].kind != vBlock && j > i+1 {
			return errNotSubset
		}
		if err := w.skip(i+1, j); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// fields walks the mapping value of e (block, {} or null), refusing a key given twice as the YAML
// library does.
func (w *walker) fields(e *yline, from, to int, f func(k *yline, from, to int) error) error {
	switch {
	case e.kind == vNull || e.kind == vEmptyMap || e.kind == vBlock && from == to:
		return nil
	case e.kind != vBlock || w.lines[from].item:
		return errNotSubset
	}
	// Most mappings span a few lines: comparing their keys pairwise costs less than a map.
	if to-from <= 32 {
		n := w.lines[from].indent
		for i := from; i < to; i++ {
			if w.lines[i].indent != n || w.lines[i].item {
				continue
			}
			for j := i + 1; j < to; j++ {
				if w.lines[j].indent == n && !w.lines[j].item && w.lines[j].key == w.lines[i].key {
					return errNotSubset
				}
			}
		}
		return w.mapping(from, to, f)
	}
	seen := make(map[string]struct{})
	return w.mapping(from, to, func(k *yline, from, to int) error {
		if _, dup := seen[k.key]; dup {
			return errNotSubset
		}
		seen[k.key] = struct{}{}
		return f(k, from, to)
	})
}

// str decodes e's value as a string (null is "").
func (w *walker) str(e *yline, from, to int) (string, error) {
	switch {
	case e.kind == vScalar:
		return e.value, nil
	case e.kind == vNull || e.kind == vBlock && from == to:
		return "", nil
	}
	return "", errNotSubset
}

// mapOf decodes e's value as a map whose values dec decodes: nil for null, empty for {}.
func mapOf[V any](w *walker, e *yline, from, to int, dec func(e *yline, from, to int) (V, error)) (map[string]V, error) {
	if e.kind == vNull || e.kind == vBlock && from == to {
		return nil, nil
	}
	m := map[string]V{}
	err := w.fields(e, from, to, func(k *yline, from, to int) error {
		v, err := dec(k, from, to)
		m[k.key] = v
		return err
	})
	return m, err
}

// document walks a document's top-level mapping.
func (w *walker) document(f func(k *yline, from, to int) error) error {
	top := yline{kind: vBlock}
	return w.fields(&top, 0, len(w.lines), f)
}
