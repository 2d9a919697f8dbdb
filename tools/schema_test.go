package tools

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// argsOf is, for each tool, the struct its handler decodes its arguments into.
var argsOf = map[string]reflect.Type{
	"listTasks":        reflect.TypeFor[listTasksArgs](),
	"getCacheStats":    reflect.TypeFor[getCacheStatsArgs](),
	"getRunHistory":    reflect.TypeFor[getRunHistoryArgs](),
	"explainCacheKey":  reflect.TypeFor[explainCacheKeyArgs](),
	"whyDidThisRerun":  reflect.TypeFor[whyDidThisRerunArgs](),
	"pruneCache":       reflect.TypeFor[pruneCacheArgs](),
	"planInit":         reflect.TypeFor[planInitArgs](),
	"searchDocs":       reflect.TypeFor[searchDocsArgs](),
	"checkLock":        reflect.TypeFor[checkLockArgs](),
	"getConfig":        reflect.TypeFor[getConfigArgs](),
	"getTaskLog":       reflect.TypeFor[getTaskLogArgs](),
	"getFailures":      reflect.TypeFor[getFailuresArgs](),
	"runTasks":         reflect.TypeFor[runTasksArgs](),
	"planTasks":        reflect.TypeFor[planTasksArgs](),
	"getWorkspaceInfo": reflect.TypeFor[getWorkspaceInfoArgs](),
}

// Every argument the decoder takes is in the tool's inputSchema, and nothing else: a value of
// each property's type decodes, a key the schema lacks is refused, and the required ones match.
func TestInputSchemasNameWhatTheDecoderTakes(t *testing.T) {
	for _, tool := range All(&Env{}).WithLister(nil).List(context.Background()) {
		typ, ok := argsOf[tool.Name]
		if !ok {
			t.Errorf("%s: no arguments type known to the test", tool.Name)
			continue
		}
		var schema struct {
			Properties map[string]map[string]any `json:"properties"`
			Required   []string                  `json:"required"`
		}
		if err := json.Unmarshal(tool.InputSchema, &schema); err != nil {
			t.Fatal(err)
		}
		fields, err := fieldsOf(typ)
		if err != nil {
			t.Fatal(err)
		}
		var names, required []string
		for _, f := range fields {
			names = append(names, f.name)
			if f.required {
				required = append(required, f.name)
			}
		}
		props := slices.Sorted(maps.Keys(schema.Properties))
		slices.Sort(names)
		if !slices.Equal(props, names) {
			t.Errorf("%s: inputSchema names %v, the decoder takes %v", tool.Name, props, names)
		}
		slices.Sort(required)
		slices.Sort(schema.Required)
		if !slices.Equal(required, schema.Required) {
			t.Errorf("%s: inputSchema requires %v, the decoder %v", tool.Name, schema.Required, required)
		}
		// A value of each property's shape decodes; a key beside them is refused by name.
		args := map[string]any{}
		for name, p := range schema.Properties {
			args[name] = sample(p)
		}
		js, _ := json.Marshal(args)
		if err := DecodeArgs(js, reflect.New(typ).Interface()); err != nil {
			t.Errorf("%s: the decoder refuses arguments its schema allows, %s: %v", tool.Name, js, err)
		}
		args["zzz"] = 1
		js, _ = json.Marshal(args)
		if err := DecodeArgs(js, reflect.New(typ).Interface()); err == nil || !strings.Contains(err.Error(), `"zzz"`) {
			t.Errorf("%s: a key the schema lacks: %v", tool.Name, err)
		}
	}
}

// sample answers a value the property schema p allows.
func sample(p map[string]any) any {
	if alts, ok := p["anyOf"].([]any); ok {
		return sample(alts[len(alts)-1].(map[string]any))
	}
	if enum, ok := p["enum"].([]any); ok {
		return enum[0]
	}
	switch p["type"] {
	case "string":
		if p["pattern"] != nil {
			return "app#build"
		}
		return "x"
	case "boolean":
		return true
	case "number", "integer":
		return 3
	case "array":
		return []any{sample(p["items"].(map[string]any))}
	case "object":
		out := map[string]any{}
		props, _ := p["properties"].(map[string]any)
		for k, v := range props {
			out[k] = sample(v.(map[string]any))
		}
		return out
	}
	return nil
}
