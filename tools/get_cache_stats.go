package tools

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/engine/history"
)

type getCacheStatsArgs struct {
	Scope *cacheScopeArg `json:"scope" arg:"doc=all or {project: NAME}."`
}

// cacheScopeArg is getCacheStats' scope: "all", or an object naming a project. An object that
// names none ({}) is refused: it would read as a narrowing that narrows nothing.
type cacheScopeArg struct {
	Project string
}

// UnmarshalJSON accepts "all" or {"project": NAME} with a non-empty NAME and no other key; each
// refusal names the argument by its path, as the decoder's own do.
func (c *cacheScopeArg) UnmarshalJSON(data []byte) error {
	var all string
	if json.Unmarshal(data, &all) == nil && all == "all" {
		return nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil || obj == nil {
		return errors.New(`must be "all" or an object {"project": NAME}`)
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if k != "project" {
			return tool.Refusef("unknown argument %q", "scope."+k)
		}
	}
	raw, ok := obj["project"]
	if !ok {
		return errors.New(`must name a project ({"project": NAME}) or be "all"`)
	}
	if json.Unmarshal(raw, &c.Project) != nil || strings.TrimSpace(c.Project) == "" {
		return tool.Refusef("argument %q must be a non-empty string", "scope.project")
	}
	return nil
}

// ArgSchema is a string ("all") or an object ({"project": NAME}); the description says which.
func (cacheScopeArg) ArgSchema() *jsonschema.Schema {
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "string"},
		{Type: "object", Properties: map[string]*jsonschema.Schema{"project": {Type: "string"}}, Required: []string{"project"}}}}
}

// getCacheStats answers as `vx cache stats [--project P] --format json`.
func (d *Deps) getCacheStats() tool.Tool {
	return tool.New(tool.Tool{
		Name:        "getCacheStats",
		Title:       "Cache statistics",
		Description: "What's the state of my cache? Entries, total bytes, runs and hits in the last 24h, hit rate; scope: { project } narrows every number. Call it before pruneCache. As vx cache stats --format json. Reads the index only.",
		Annotations: readOnly,
		OutputTypes: map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[history.CacheScope](): {AnyOf: []*jsonschema.Schema{
			{Type: "string"}, {Type: "object"},
		}}},
	}, func(ctx context.Context, call *tool.Call, args getCacheStatsArgs) (*history.CacheStats, error) {
		project := ""
		if args.Scope != nil {
			project = args.Scope.Project
		}
		st, release, err := d.openState(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
		stats, err := history.Cache(ctx, st, project, time.Now())
		if err != nil {
			return nil, historyError(err, "cache statistics")
		}
		return stats, nil
	})
}
