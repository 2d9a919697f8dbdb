package tools

import (
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// The argument types that check themselves (their UnmarshalJSON) say the shapes they accept, in
// the portable subset, for the input schemas (tool.Schemer).

func nonemptyString() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", MinLength: jsonschema.Ptr(1)}
}

// ArgSchema is a non-empty string or a non-empty list of them.
func (FilterList) ArgSchema() *jsonschema.Schema {
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{
		nonemptyString(),
		{Type: "array", MinItems: jsonschema.Ptr(1), Items: nonemptyString()},
	}}
}

// ArgSchema is a boolean or a non-empty string (a git ref).
func (Affected) ArgSchema() *jsonschema.Schema {
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "boolean"}, nonemptyString()}}
}

// ArgSchema is a list of non-empty strings.
func (taskNames) ArgSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "array", Items: nonemptyString()}
}

// documentSchema describes a document an answer carries (the CLI's --format json document under
// the original's key) as an object only, for the output schema: its fields are the manual's
// (docs/mcp.md) and the CLI's, and describing them again in every tools/list costs what a client
// keeps of the tools.
func documentSchema[T any]() map[reflect.Type]*jsonschema.Schema {
	return map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[T](): {Type: "object"}}
}
