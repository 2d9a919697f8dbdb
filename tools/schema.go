package tools

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

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

// argTypeSchemas are the schemas of the argument types that check themselves (their
// UnmarshalJSON): the shapes they accept, in the portable subset.
var argTypeSchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[Filter](): {Type: "string", MinLength: jsonschema.Ptr(1)},
	reflect.TypeFor[FilterList](): {AnyOf: []*jsonschema.Schema{
		{Type: "string", MinLength: jsonschema.Ptr(1)},
		{Type: "array", MinItems: jsonschema.Ptr(1), Items: &jsonschema.Schema{Type: "string", MinLength: jsonschema.Ptr(1)}},
	}},
	reflect.TypeFor[Affected]():  {AnyOf: []*jsonschema.Schema{{Type: "boolean"}, {Type: "string", MinLength: jsonschema.Ptr(1)}}},
	reflect.TypeFor[taskNames](): {Type: "array", Items: &jsonschema.Schema{Type: "string", MinLength: jsonschema.Ptr(1)}},
}

// inputOf is the input schema of a tool whose arguments DecodeArgs decodes into T: generated from
// that struct, so that it names exactly the arguments the decoder takes. A field's `jsonschema`
// tag is its description; its `args` tag says required (required) and non-empty (minLength or
// minItems 1); its `schema` tag adds what a Go type cannot say: pattern=RE, enum=a|b|c,
// default=JSON (each a separate tag option, separated by ";").
func inputOf[T any]() json.RawMessage {
	t := reflect.TypeFor[T]()
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: argTypeSchemas})
	if err != nil {
		panic(fmt.Sprintf("tools: input schema of %v: %v", t, err))
	}
	if err := shapeArgs(s, t); err != nil {
		panic(fmt.Sprintf("tools: input schema of %v: %v", t, err))
	}
	return mustJSON(s)
}

// shapeArgs brings the generated schema s of the argument struct t to what DecodeArgs accepts.
func shapeArgs(s *jsonschema.Schema, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	fields, err := fieldsOf(t)
	if err != nil {
		return err
	}
	s.Type, s.Types, s.Required = "object", nil, nil
	for _, f := range fields {
		p := s.Properties[f.name]
		if p == nil {
			return fmt.Errorf("argument %q is not in the generated schema", f.name)
		}
		// DecodeArgs refuses null: a pointer field is only optional.
		if len(p.Types) > 0 {
			p.Types = slices.DeleteFunc(p.Types, func(x string) bool { return x == "null" })
			switch len(p.Types) {
			case 0:
				p.Types = nil
			case 1:
				p.Type, p.Types = p.Types[0], nil
			}
		}
		if f.required {
			s.Required = append(s.Required, f.name)
		}
		if f.nonempty {
			switch p.Type {
			case "string":
				p.MinLength = jsonschema.Ptr(1)
			case "array":
				p.MinItems = jsonschema.Ptr(1)
			}
		}
		sf := t.FieldByIndex(f.index)
		for opt := range strings.SplitSeq(sf.Tag.Get("schema"), ";") {
			key, val, _ := strings.Cut(opt, "=")
			switch key {
			case "":
			case "pattern":
				p.Pattern = val
			case "enum":
				for _, v := range strings.Split(val, "|") {
					p.Enum = append(p.Enum, v)
				}
			case "default":
				p.Default = json.RawMessage(val)
			default:
				return fmt.Errorf("field %s: unknown schema option %q", sf.Name, key)
			}
		}
		ft := sf.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			if _, custom := argTypeSchemas[ft]; !custom {
				if err := shapeArgs(p, ft); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
