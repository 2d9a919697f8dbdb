package tools

import (
	"context"
	"reflect"

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
		Description: "What is this workspace, and what will a run use? vx info --format json: attention (what needs a look), versions, git, projects, tasks, configs that failed, plugins, workers, memory budget, cache, flaky tasks, sandbox, lock, watcher.",
		Paged:       true,
		// A section's value (info.Section.Value, an any) is always the document of its part of
		// vx: an object.
		OutputTypes: map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[any](): {Type: "object"}},
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
