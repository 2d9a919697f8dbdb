package tools

import "github.com/google/jsonschema-go/jsonschema"

// The argument types that check themselves (their UnmarshalJSON) say the shapes they accept, in
// the portable subset, for the input schemas (tool.Schemer).

func nonemptyString() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", MinLength: jsonschema.Ptr(1)}
}

// ArgSchema is a non-empty string.
func (Filter) ArgSchema() *jsonschema.Schema { return nonemptyString() }

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
