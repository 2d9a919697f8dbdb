package tools

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vzn/vx/actor/tool"
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
	for _, tl := range All(&Deps{}).WithLister(nil).List(context.Background()) {
		typ, ok := argsOf[tl.Name]
		if !ok {
			t.Errorf("%s: no arguments type known to the test", tl.Name)
			continue
		}
		var schema struct {
			Properties map[string]map[string]any `json:"properties"`
			Required   []string                  `json:"required"`
		}
		if err := json.Unmarshal(tl.InputSchema, &schema); err != nil {
			t.Fatal(err)
		}
		names, required := argNames(typ)
		props := slices.Sorted(maps.Keys(schema.Properties))
		slices.Sort(names)
		if !slices.Equal(props, names) {
			t.Errorf("%s: inputSchema names %v, the decoder takes %v", tl.Name, props, names)
		}
		slices.Sort(required)
		slices.Sort(schema.Required)
		if !slices.Equal(required, schema.Required) {
			t.Errorf("%s: inputSchema requires %v, the decoder %v", tl.Name, schema.Required, required)
		}
		// A value of each property's shape decodes; a key beside them is refused by name.
		args := map[string]any{}
		for name, p := range schema.Properties {
			args[name] = sample(p)
		}
		js, _ := json.Marshal(args)
		if err := tool.Decode(js, reflect.New(typ).Interface()); err != nil {
			t.Errorf("%s: the decoder refuses arguments its schema allows, %s: %v", tl.Name, js, err)
		}
		args["zzz"] = 1
		js, _ = json.Marshal(args)
		if err := tool.Decode(js, reflect.New(typ).Interface()); err == nil || !strings.Contains(err.Error(), `"zzz"`) {
			t.Errorf("%s: a key the schema lacks: %v", tl.Name, err)
		}
	}
}

// argNames are the json names of the fields of the argument struct t (embedded structs
// flattened) and those whose arg tag says required.
func argNames(t reflect.Type) (names, required []string) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			n, r := argNames(f.Type)
			names, required = append(names, n...), append(required, r...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		names = append(names, name)
		opts, _, _ := strings.Cut(f.Tag.Get(tool.ArgTag), "doc=")
		if slices.Contains(strings.Split(opts, ","), "required") {
			required = append(required, name)
		}
	}
	return names, required
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
