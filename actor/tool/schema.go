package tool

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

// outputSchemaOf is the output schema of a tool answering t, as spec says (Paged, Optional,
// OutputTypes): generated from the Go type (one source: the answer cannot drift from its
// schema), kept to the portable subset (see portable) and to outputDepth levels. A paged answer's
// schema also has the page fields (nextCursor, total, omitted). A pointer t is described as what
// it points to. It panics on a type jsonschema-go cannot describe (a programming error).
func outputSchemaOf(t reflect.Type, spec Tool) json.RawMessage {
	for t.Kind() == reflect.Pointer { // a handler answers a non-nil pointer: what it points to
		t = t.Elem()
	}
	types := map[reflect.Type]*jsonschema.Schema{rawMessageType: {}}
	maps.Copy(types, spec.OutputTypes)
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{IgnoreInvalidTypes: true, TypeSchemas: types})
	if err != nil {
		panic(fmt.Sprintf("tool: output schema of %v: %v", t, err))
	}
	js, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	var generated any
	if err := json.Unmarshal(js, &generated); err != nil {
		panic(err)
	}
	m := portable(generated, 0)
	if req, ok := m["required"].([]any); ok && len(spec.Optional) > 0 {
		m["required"] = slices.DeleteFunc(req, func(v any) bool { s, _ := v.(string); return slices.Contains(spec.Optional, s) })
	}
	if spec.Paged {
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

// portable rewrites a generated output schema into the subset every client accepts (see
// CheckSchema) and cuts it at outputDepth: a type array becomes anyOf of single types; a struct's
// closed properties open (an answer may grow a field before its schema does; a map keeps its
// values' schema as additionalProperties); below outputDepth a schema keeps its type only, an
// array its items' type; a value of any shape (a bare true) is {}; descriptions and property orders
// go.
func portable(v any, depth int) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		return map[string]any{}
	}
	delete(m, "propertyOrder")
	delete(m, "description")
	if depth >= outputDepth {
		cut := map[string]any{}
		if t, ok := m["type"]; ok {
			cut["type"] = t
		}
		if items, ok := m["items"]; ok {
			cut["items"] = portable(items, depth+1) // an array says what it holds, cut as well
		}
		return complete(nullable(cut))
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for _, k := range slices.Collect(maps.Keys(props)) {
			props[k] = portable(props[k], depth+1)
		}
	}
	if items, ok := m["items"]; ok {
		m["items"] = portable(items, depth+1)
	}
	if values, ok := m["additionalProperties"].(map[string]any); ok {
		m["additionalProperties"] = portable(values, depth+1)
	} else {
		delete(m, "additionalProperties") // false (a struct) opens
	}
	if alts, ok := m["anyOf"].([]any); ok {
		for i, alt := range alts {
			alts[i] = portable(alt, depth)
		}
	}
	return complete(nullable(m))
}

// complete gives an array schema (or alternative) without items the items {}. An object without
// additionalProperties is open already: saying so ({}) would cost every tools/list 25 bytes an
// object for nothing.
func complete(m map[string]any) map[string]any {
	if alts, ok := m["anyOf"].([]any); ok {
		for _, alt := range alts {
			if a, ok := alt.(map[string]any); ok {
				complete(a)
			}
		}
	}
	if _, ok := m["items"]; !ok && m["type"] == "array" {
		m["items"] = map[string]any{}
	}
	return m
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

// Schemer is an argument type that checks itself (its UnmarshalJSON) and says, for the input
// schema, the shapes it accepts, in the portable subset.
type Schemer interface {
	ArgSchema() *jsonschema.Schema
}

var schemerType = reflect.TypeFor[Schemer]()

// schemers collects the schemas of the Schemer types t holds, at any depth.
func schemers(t reflect.Type, into map[reflect.Type]*jsonschema.Schema) {
	isSchemer := func(t reflect.Type) bool {
		return t.Implements(schemerType) || reflect.PointerTo(t).Implements(schemerType)
	}
	for t.Kind() == reflect.Pointer || !isSchemer(t) && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
		t = t.Elem()
	}
	if _, seen := into[t]; seen {
		return
	}
	if isSchemer(t) {
		into[t] = reflect.New(t).Interface().(Schemer).ArgSchema()
		return
	}
	if t.Kind() == reflect.Struct {
		for i := range t.NumField() {
			schemers(t.Field(i).Type, into)
		}
	}
}

// inputSchemaOf is the input schema of a tool whose arguments Decode decodes into t: generated
// from that struct, so that it names exactly the arguments the decoder takes, each property as
// its `arg` tag says (see ArgTag), in the portable subset (closed objects say
// additionalProperties false). A json.RawMessage t, arguments the tool reads itself, is any
// object. It panics on a type Decode cannot decode into (a programming error).
func inputSchemaOf(t reflect.Type) json.RawMessage {
	if t == rawMessageType {
		return json.RawMessage(`{"type":"object"}`)
	}
	custom := map[reflect.Type]*jsonschema.Schema{}
	schemers(t, custom)
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: custom})
	if err != nil {
		panic(fmt.Sprintf("tool: input schema of %v: %v", t, err))
	}
	if err := shapeArgs(s, t, custom); err != nil {
		panic(fmt.Sprintf("tool: input schema of %v: %v", t, err))
	}
	return mustJSON(s)
}

// shapeArgs brings the generated schema s of the argument struct t to what Decode accepts.
func shapeArgs(s *jsonschema.Schema, t reflect.Type, custom map[reflect.Type]*jsonschema.Schema) error {
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
		// Decode refuses null: a pointer field is only optional.
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
		p.Description = f.doc
		if f.pattern != "" {
			p.Pattern = f.pattern
		}
		for _, v := range f.enum {
			p.Enum = append(p.Enum, v)
		}
		if f.def != nil {
			p.Default = f.def
		}
		ft := t.FieldByIndex(f.index).Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			if _, isCustom := custom[ft]; !isCustom {
				if err := shapeArgs(p, ft, custom); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("tool: schema: %v", err))
	}
	return data
}
