package tool

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// ErrUnportable marks a schema that some MCP client or model provider refuses.
var ErrUnportable = errors.New("uses what not every client accepts")

// CheckSchema refuses a tool schema (an inputSchema or outputSchema) that is not a JSON object or
// leaves the subset every MCP client and model provider accepts. The rules are those of the MCP
// Inspector's tool-schema portability lint (its CLI's --strict refuses what it counts as errors;
// modelcontextprotocol/inspector#2121, written for issue #1005), and vx's own:
//
//   - a bare boolean where a schema is expected (`"data": true`, `"items": false`): Claude Code
//     refuses the whole tools/list ("Invalid input" at that path). An open object says
//     `additionalProperties: {}` instead of true; `additionalProperties: false`, a closed object,
//     is what OpenAI's strict mode asks for and every client takes, and is the one boolean kept;
//   - an array without items (Gemini's and OpenAI's function declarations require them);
//   - a `type` array (`["string","null"]`): write anyOf of single types;
//   - oneOf and $ref, which Gemini does not resolve.
//
// Only schema-valued keywords are walked, so an enum, const or default may hold any JSON.
// The error wraps ErrUnportable and names the first offending place by its path.
func CheckSchema(schema json.RawMessage) error {
	var obj map[string]any
	if err := json.Unmarshal(schema, &obj); err != nil || obj == nil {
		return errors.New("is not a JSON object")
	}
	if where := unportable(obj, "", ""); where != "" {
		return fmt.Errorf("%w: %s", ErrUnportable, where)
	}
	return nil
}

// Keywords whose value is a schema, a list of schemas, or a map of names to schemas.
var (
	schemaKeywords = []string{"items", "additionalProperties", "not", "contains", "if", "then", "else",
		"propertyNames", "additionalItems", "unevaluatedItems", "unevaluatedProperties"}
	schemaListKeywords = []string{"anyOf", "allOf", "oneOf", "prefixItems"}
	schemaMapKeywords  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)

// unportable answers where the schema v, reached by keyword from path, leaves the portable subset;
// "" when it does not.
func unportable(v any, path, keyword string) string {
	at := path
	if at == "" {
		at = "the schema"
	}
	m, ok := v.(map[string]any)
	if !ok {
		if b, isBool := v.(bool); isBool && keyword == "additionalProperties" && !b {
			return ""
		}
		return fmt.Sprintf("%s: a bare %v where a schema is expected (write {} or the value's schema)", at, v)
	}
	if _, ok := m["type"].([]any); ok {
		return at + ": a type array (write anyOf of single types)"
	}
	for _, k := range []string{"oneOf", "$ref"} {
		if _, ok := m[k]; ok {
			return at + ": " + k
		}
	}
	if m["type"] == "array" && m["items"] == nil && m["prefixItems"] == nil {
		return at + ": an array without items"
	}
	for _, k := range schemaKeywords {
		if sub, ok := m[k]; ok {
			if where := unportable(sub, join(path, k), k); where != "" {
				return where
			}
		}
	}
	for _, k := range schemaListKeywords {
		list, _ := m[k].([]any)
		for i, sub := range list {
			if where := unportable(sub, fmt.Sprintf("%s[%d]", join(path, k), i), k); where != "" {
				return where
			}
		}
	}
	for _, k := range schemaMapKeywords {
		subs, _ := m[k].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(subs)) {
			if where := unportable(subs[name], join(join(path, k), name), k); where != "" {
				return where
			}
		}
	}
	return ""
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
