package tool

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// The portability check refuses what the Inspector's strict lint refuses, naming the place.
func TestCheckSchemaRefuses(t *testing.T) {
	for _, tc := range []struct{ schema, where string }{
		{`{"type":"object","properties":{"data":true}}`, "properties.data: a bare true"},
		{`{"type":"object","properties":{"data":false}}`, "properties.data: a bare false"},
		{`{"type":"object","additionalProperties":true}`, "additionalProperties: a bare true"},
		{`{"type":"array","items":true}`, "items: a bare true"},
		{`{"type":"object","properties":{"l":{"anyOf":[{"type":"array"},{"type":"null"}]}}}`, "properties.l.anyOf[0]: an array without items"},
		{`{"type":"object","properties":{"l":{"type":"array"}}}`, "properties.l: an array without items"},
		{`{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"array"}}}}`, "properties.m.additionalProperties: an array without items"},
		{`{"type":"object","properties":{"n":{"type":["integer","null"]}}}`, "properties.n: a type array"},
		{`{"type":"object","properties":{"a":{"oneOf":[{"type":"string"},{"type":"boolean"}]}}}`, "properties.a: oneOf"},
		{`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}}}`, "properties.a: $ref"},
		{`{"type":"object","$defs":{"x":true}}`, "$defs.x: a bare true"},
		{`{"type":"object","properties":{"a":{"not":false}}}`, "properties.a.not: a bare false"},
	} {
		err := CheckSchema(json.RawMessage(tc.schema))
		if !errors.Is(err, ErrUnportable) || !strings.Contains(err.Error(), tc.where) {
			t.Errorf("CheckSchema(%s) = %v, want %q", tc.schema, err, tc.where)
		}
	}
	for _, bad := range []string{`[]`, `true`, `null`, `{`} {
		if err := CheckSchema(json.RawMessage(bad)); err == nil {
			t.Errorf("CheckSchema(%s) accepted a schema that is not an object", bad)
		}
	}
}

// What every client takes passes: a closed object, {} for any value, and booleans that are
// values rather than schemas (default, enum, const).
func TestCheckSchemaAccepts(t *testing.T) {
	for _, good := range []string{
		`{"type":"object"}`,
		`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`,
		`{"type":"object","additionalProperties":{}}`,
		`{"type":"object","properties":{"v":{},"l":{"type":"array","items":{}}}}`,
		`{"type":"object","properties":{"dryRun":{"type":"boolean","default":true,"enum":[true,false],"const":true}}}`,
		`{"type":"object","properties":{"f":{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]}}}`,
	} {
		if err := CheckSchema(json.RawMessage(good)); err != nil {
			t.Errorf("CheckSchema(%s) = %v", good, err)
		}
	}
}

// A derived output schema carries no bare boolean: a value of any shape is {}, a struct is an open
// object (a map says its values' schema), and every array, deep ones cut at outputDepth
// included, has items.
func TestOutputSchemaIsPortable(t *testing.T) {
	type leaf struct {
		Names []string `json:"names"`
	}
	type answer struct {
		Any    any                `json:"any"`
		Raw    json.RawMessage    `json:"raw"`
		Map    map[string]int     `json:"map"`
		Deep   struct{ L []leaf } `json:"deep"`
		Lists  [][]string         `json:"lists"`
		Nested *leaf              `json:"nested"`
	}
	schema := outputSchemaOf(reflect.TypeFor[answer](), Tool{Paged: true})
	if err := CheckSchema(schema); err != nil {
		t.Fatalf("%v in %s", err, schema)
	}
	for _, want := range []string{`"any":{}`, `"raw":{}`, `"map":{"additionalProperties":{"type":"integer"},"type":"object"}`,
		`"L":{"anyOf":[{"items":{"type":"object"},"type":"array"},{"type":"null"}]}`} {
		if !strings.Contains(string(schema), want) {
			t.Errorf("output schema lacks %s: %s", want, schema)
		}
	}
}
