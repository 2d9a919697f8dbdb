package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/engine/info"
)

type getWorkspaceInfoArgs struct {
	Cursor string `json:"cursor" arg:"nonempty,doc=nextCursor."`
}

// getWorkspaceInfo answers as `vx info --format json`.
func (d *Deps) getWorkspaceInfo() tool.Tool {
	return tool.New(tool.Tool{
		Name:        "getWorkspaceInfo",
		Title:       "Workspace info",
		Description: "What is this workspace, and what will a run use? vx info --format json: attention (what needs a look), versions, git, projects, tasks, config errors, plugins, workers, memory, cache, flaky tasks, sandbox, lock, watcher.",
		Paged:       true,
		// The answer is written as info.Written (vx's sections and the original's flat facts). A
		// section's value (info.Section.Value, an any) is always the document of its part of vx: an
		// object.
		OutputTypes: map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[info.Document](): writtenSchema(sectionValue),
			reflect.TypeFor[any](): sectionValue},
		Annotations: readOnly,
	}, func(ctx context.Context, call *tool.Call, args getWorkspaceInfoArgs) (*info.Document, error) {
		doc, err := info.Answer(ctx, d.loader(), d.Version, 0, d.getenv)
		if err != nil {
			return nil, err
		}
		call.Window(ctx, args.Cursor, infoLists(doc)...)
		return doc, nil
	})
}

// sectionValue is the schema of an info.Section's value: an object.
var sectionValue = &jsonschema.Schema{Type: "object"}

// writtenSchema is the schema of info.Written, each section's value an object (value). vx's
// sections and the original's facts hold Go fields of one name (Git, FlakyTasks, Sandbox) under
// different JSON names, which the generator leaves out of the embedding type: they are added from
// the schemas of info.Document and info.Facts. It panics on a type jsonschema-go cannot describe
// (a programming error).
func writtenSchema(value *jsonschema.Schema) *jsonschema.Schema {
	opts := &jsonschema.ForOptions{IgnoreInvalidTypes: true,
		TypeSchemas: map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[any](): value, reflect.TypeFor[json.RawMessage](): {}}}
	var parts [3]*jsonschema.Schema
	for i, t := range []reflect.Type{reflect.TypeFor[info.Written](), reflect.TypeFor[info.Facts](), reflect.TypeFor[info.Document]()} {
		s, err := jsonschema.ForType(t, opts)
		if err != nil {
			panic(fmt.Sprintf("getWorkspaceInfo: output schema of %v: %v", t, err))
		}
		parts[i] = s
	}
	out := parts[0]
	for _, part := range parts[1:] {
		for name, p := range part.Properties {
			if _, ok := out.Properties[name]; !ok {
				out.Properties[name] = p
				out.Required = append(out.Required, name)
			}
		}
	}
	// vx's own parts but its sections (an object each, docs/mcp.md) are described as objects, and
	// no field is listed as required (the answer writes every one): tools/list's budget goes to
	// the original's facts, every field of which the schema names, and to the sections' shape.
	for name, p := range parts[2].Properties {
		_, fact := parts[1].Properties[name]
		_, section := p.Properties["value"]
		written, _ := json.Marshal(out.Properties[name])
		own, _ := json.Marshal(p)
		// A part Written writes in the original's shape (workers) is one of its facts.
		if !fact && !section && string(written) == string(own) && isObject(p) {
			out.Properties[name] = &jsonschema.Schema{Type: "object"}
			if slices.Contains(p.Types, "null") {
				out.Properties[name] = &jsonschema.Schema{Types: []string{"object", "null"}}
			}
		}
	}
	out.Required = nil
	for _, p := range out.Properties {
		p.Required = nil
	}
	// Written's plugins and configErrors are lists, never null (Document.MarshalJSON makes them).
	for _, name := range []string{"plugins", "configErrors"} {
		if p := out.Properties[name]; p != nil && slices.Contains(p.Types, "array") {
			p.Type, p.Types = "array", nil
		}
	}
	return out
}

// isObject reports whether s describes an object, or an object or null.
func isObject(s *jsonschema.Schema) bool {
	return s.Type == "object" || slices.Contains(s.Types, "object")
}
