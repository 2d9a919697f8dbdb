package agents

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// tomlServer puts table, a TOML text that is one [mcp_servers.vx] table, into a TOML file as text:
// no Go TOML library writes comments back, so every line outside that table stays as it is. A
// real TOML parser finds the table (a "[x]" line inside a multi-line string is no header) and
// where its keys end; a table whose command and args already are table's is left byte for byte.
//
// Where mcp_servers.vx, or mcp_servers itself, is set by a key (an inline table, dotted keys) there
// is no table to replace and another [mcp_servers.vx] would redefine it: the file is refused,
// naming the line. The new text is parsed back and must hold table's command and args under
// mcp_servers.vx and, apart from that entry, what the old text held; else it is refused.
func tomlServer(table string) edit {
	return func(old []byte) ([]byte, error) {
		want, err := decodeTOML([]byte(table))
		if err != nil {
			return nil, fmt.Errorf("vx's own table: %w", err)
		}
		if len(old) == 0 {
			return []byte(table), nil
		}
		before, err := decodeTOML(old)
		if err != nil {
			return nil, err
		}
		if sameServer(before, want) {
			return old, nil
		}
		text, err := replaceTable(old, table)
		if err != nil {
			return nil, err
		}
		after, err := decodeTOML(text)
		if err == nil && (!sameServer(after, want) || !reflect.DeepEqual(withoutServer(before), withoutServer(after))) {
			err = errors.New("mcp_servers.vx is not vx's entry, or another value changed")
		}
		if err != nil {
			return nil, fmt.Errorf("the merged file would not read back as intended (%w); left as it was", err)
		}
		return text, nil
	}
}

// decodeTOML parses a TOML document, naming the line of an error.
func decodeTOML(data []byte) (map[string]any, error) {
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, _ := de.Position()
			return nil, fmt.Errorf("parse: line %d: %s", row, strings.TrimPrefix(de.Error(), "toml: "))
		}
		return nil, fmt.Errorf("parse: %w", err)
	}
	if doc == nil {
		doc = map[string]any{}
	}
	return doc, nil
}

// serverOf is doc's mcp_servers.vx table, nil where there is none.
func serverOf(doc map[string]any) map[string]any {
	servers, _ := doc["mcp_servers"].(map[string]any)
	vx, _ := servers["vx"].(map[string]any)
	return vx
}

// sameServer reports whether doc's mcp_servers.vx has want's command and args.
func sameServer(doc, want map[string]any) bool {
	got, w := serverOf(doc), serverOf(want)
	return got != nil && reflect.DeepEqual(got["command"], w["command"]) && reflect.DeepEqual(got["args"], w["args"])
}

// withoutServer is doc without mcp_servers.vx (and without mcp_servers where vx was all it held).
func withoutServer(doc map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range doc {
		out[k] = v
	}
	servers, ok := doc["mcp_servers"].(map[string]any)
	if !ok {
		return out
	}
	rest := map[string]any{}
	for k, v := range servers {
		if k != "vx" {
			rest[k] = v
		}
	}
	out["mcp_servers"] = rest
	if len(rest) == 0 {
		delete(out, "mcp_servers")
	}
	return out
}

// tomlExpr is one top-level expression of a TOML file: a table header or a key/value.
type tomlExpr struct {
	header bool
	array  bool
	// table is the key of the table the expression is in (for a header, the one it opens).
	table []string
	// key is the full key a key/value sets: table followed by its own dotted key.
	key []string
	// start and end are the byte offsets of the expression's lines, end after its newline.
	start, end int
	line       int
}

// replaceTable replaces the [mcp_servers.vx] table of old (its header and its keys) with table,
// or appends table where old has none.
func replaceTable(old []byte, table string) ([]byte, error) {
	exprs, err := tomlExprs(old)
	if err != nil {
		return nil, err
	}
	vx := []string{"mcp_servers", "vx"}
	at := -1
	for i, e := range exprs {
		if err := setByKey(e, vx); err != nil {
			return nil, err
		}
		if e.header && !e.array && slices.Equal(e.table, vx) {
			at = i
		}
	}
	text := string(old)
	if at < 0 {
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		return []byte(text + "\n" + table), nil
	}
	// The table's keys run to the next header; comments and blank lines after its last key stay,
	// as they belong to what follows.
	start, end := exprs[at].start, exprs[at].end
	for _, e := range exprs[at+1:] {
		if e.header {
			break
		}
		end = e.end
	}
	return []byte(text[:start] + table + text[end:]), nil
}

// setByKey refuses an expression that sets mcp_servers.vx, or all of mcp_servers, by a key outside
// the [mcp_servers.vx] table: vx cannot add its table beside it without redefining it.
func setByKey(e tomlExpr, vx []string) error {
	if e.header {
		if e.array && slices.Equal(e.table, vx) {
			return fmt.Errorf("line %d: [[mcp_servers.vx]] makes mcp_servers.vx an array of tables; make it the table [mcp_servers.vx] or remove it", e.line)
		}
		return nil
	}
	if len(e.table) >= 2 && slices.Equal(e.table[:2], vx) {
		return nil
	}
	switch {
	case slices.Equal(e.key, vx[:1]):
		return fmt.Errorf("line %d: mcp_servers is set by a key (an inline table), which cannot take another server; write its servers as [mcp_servers.NAME] tables", e.line)
	case len(e.key) >= 2 && slices.Equal(e.key[:2], vx):
		return fmt.Errorf("line %d: mcp_servers.vx is set by the key %s, not by a [mcp_servers.vx] table; write it as that table or remove it", e.line, strings.Join(e.key[len(e.table):], "."))
	}
	return nil
}

// tomlExprs lists the top-level expressions of a TOML file with the lines each one spans.
func tomlExprs(data []byte) ([]tomlExpr, error) {
	var p unstable.Parser
	p.Reset(data)
	var exprs []tomlExpr
	var table []string
	for p.NextExpression() {
		n := p.Expression()
		var e tomlExpr
		var first, last unstable.Range
		switch n.Kind {
		case unstable.Table, unstable.ArrayTable:
			keys, ranges := keyParts(n.Key())
			table = keys
			e = tomlExpr{header: true, array: n.Kind == unstable.ArrayTable, table: keys, key: keys}
			first, last = ranges[0], ranges[len(ranges)-1]
		case unstable.KeyValue:
			keys, _ := keyParts(n.Key())
			e = tomlExpr{table: table, key: append(slices.Clone(table), keys...)}
			first, last = n.Raw, n.Raw
		default:
			continue
		}
		e.start = lineStart(data, int(first.Offset))
		e.end = lineAfter(data, int(last.Offset+last.Length))
		e.line = p.Shape(first).Start.Line
		exprs = append(exprs, e)
	}
	if err := p.Error(); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	return exprs, nil
}

// keyParts are the parts of a dotted key and the ranges they were read from.
func keyParts(it unstable.Iterator) ([]string, []unstable.Range) {
	var keys []string
	var ranges []unstable.Range
	for it.Next() {
		keys = append(keys, string(it.Node().Data))
		ranges = append(ranges, it.Node().Raw)
	}
	return keys, ranges
}

// lineStart is the offset of the start of the line holding offset.
func lineStart(data []byte, offset int) int {
	return bytes.LastIndexByte(data[:offset], '\n') + 1
}

// lineAfter is the offset just after the newline that ends the line holding offset (the end of
// data on the last line).
func lineAfter(data []byte, offset int) int {
	if i := bytes.IndexByte(data[offset:], '\n'); i >= 0 {
		return offset + i + 1
	}
	return len(data)
}
