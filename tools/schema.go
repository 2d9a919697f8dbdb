package tools

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// outputDepth is how deep an output schema describes an answer: below it, an object is any object
// and an array any array. The model reads descriptions and input schemas; an output schema is for
// the client's validation, and a deep one costs every tools/list its size.
const outputDepth = 2

// outputOf is the output schema of a tool answering T: generated from the Go type (one source: the
// answer cannot drift from its schema), kept to the portable subset (anyOf of single types for a
// nullable field, never a type array) and to outputDepth levels. A windowed answer's schema also
// has the page fields (nextCursor, total, omitted).
//
// optional names top-level fields the answer may leave out although the type writes them
// (getRunHistory asked with a run id answers only its run).
func outputOf[T any](windowed bool, optional ...string) json.RawMessage {
	s, err := jsonschema.ForType(reflect.TypeFor[T](), &jsonschema.ForOptions{IgnoreInvalidTypes: true,
		TypeSchemas: map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[json.RawMessage](): {}}})
	if err != nil {
		panic(fmt.Sprintf("tools: output schema of %v: %v", reflect.TypeFor[T](), err))
	}
	js, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		panic(err)
	}
	m = portable(m, 0).(map[string]any)
	if req, ok := m["required"].([]any); ok && len(optional) > 0 {
		m["required"] = slices.DeleteFunc(req, func(v any) bool { s, _ := v.(string); return slices.Contains(optional, s) })
	}
	if windowed {
		props, _ := m["properties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
			m["properties"] = props
		}
		props["nextCursor"] = map[string]any{"type": "string"}
		props["total"] = map[string]any{"type": "integer"}
		props["omitted"] = map[string]any{"type": "integer"}
	}
	return mustJSON(m)
}

// portable rewrites a generated schema into the subset every client accepts and cuts it at
// outputDepth: a type array becomes anyOf of single types; a struct's closed properties open (an
// answer may grow a field before its schema does); descriptions and property orders go.
func portable(v any, depth int) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	delete(m, "additionalProperties")
	delete(m, "propertyOrder")
	delete(m, "description")
	if depth >= outputDepth {
		out := map[string]any{}
		if t, ok := m["type"]; ok {
			out["type"] = t
		}
		return nullable(out)
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for _, k := range slices.Collect(maps.Keys(props)) {
			props[k] = portable(props[k], depth+1)
		}
	}
	if items, ok := m["items"]; ok {
		m["items"] = portable(items, depth+1)
	}
	return nullable(m)
}

// nullable turns {"type": ["null", X], ...} into {"anyOf": [{"type": X, ...}, {"type": "null"}]}.
func nullable(m map[string]any) map[string]any {
	types, ok := m["type"].([]any)
	if !ok {
		return m
	}
	var single []any
	for _, t := range types {
		if t != "null" {
			single = append(single, t)
		}
	}
	hasNull := len(single) < len(types)
	delete(m, "type")
	var anyOf []any
	for i, t := range single {
		alt := map[string]any{"type": t}
		if i == 0 {
			maps.Copy(alt, m)
			alt["type"] = t
		}
		anyOf = append(anyOf, alt)
	}
	if hasNull {
		anyOf = append(anyOf, map[string]any{"type": "null"})
	}
	if len(anyOf) == 1 {
		return anyOf[0].(map[string]any)
	}
	return map[string]any{"anyOf": anyOf}
}
