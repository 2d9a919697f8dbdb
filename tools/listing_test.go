package tools

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/graph"
)

// What a model reads of the tools — for each, the compact JSON of its name, description and input
// schema — stays within 10,240 bytes for the fifteen, so that listing them costs an agent little.
func TestModelVisibleToolText(t *testing.T) {
	size := 0
	for _, tl := range All(&Deps{}).WithLister(nil).List(context.Background()) {
		js, err := json.Marshal(struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}{tl.Name, tl.Description, tl.InputSchema})
		if err != nil {
			t.Fatal(err)
		}
		size += len(js)
	}
	t.Logf("the tools' model-visible text takes %d bytes", size)
	if size > 10_240 {
		t.Errorf("the tools' model-visible text takes %d bytes, more than 10,240", size)
	}
}

// The server's instructions fit the 800 characters hosts are given, and name the tools to call
// first.
func TestInstructionsFit(t *testing.T) {
	if n := len([]rune(Instructions)); n > 800 {
		t.Errorf("instructions take %d characters, more than 800", n)
	}
	for _, name := range []string{"listTasks", "runTasks", "getFailures", "whyDidThisRerun", "file:line"} {
		if !strings.Contains(Instructions, name) {
			t.Errorf("instructions do not name %s", name)
		}
	}
}

// runTasks and getFailures are shown on the first turn by hosts that defer tools, every other tool
// carries a search hint, runTasks alone may run as a task; and mcp({ tools }) knows every tool by
// the name the registry gives it.
func TestToolListing(t *testing.T) {
	var names []string
	for _, tl := range All(&Deps{}).WithLister(nil).List(context.Background()) {
		names = append(names, tl.Name)
		first := tl.Name == "runTasks" || tl.Name == "getFailures"
		if tl.AlwaysLoad != first || (!first && tl.SearchHint == "") || (tl.TaskSupport == "optional") != (tl.Name == "runTasks") {
			t.Errorf("%s: alwaysLoad %v, searchHint %q, taskSupport %q", tl.Name, tl.AlwaysLoad, tl.SearchHint, tl.TaskSupport)
		}
	}
	if !slices.Equal(names, graph.MCPToolNames) {
		t.Errorf("tools %v, mcp({ tools }) knows %v", names, graph.MCPToolNames)
	}
}

// No output schema says items {} (an array of anything), which the Inspector's --strict warns of:
// every array says what it holds.
func TestNoOutputSchemaHasEmptyItems(t *testing.T) {
	for _, tl := range All(&Deps{}).WithLister(nil).List(context.Background()) {
		var schema any
		if err := json.Unmarshal(tl.OutputSchema, &schema); err != nil {
			t.Fatalf("%s: %v", tl.Name, err)
		}
		walkSchema(schema, "", func(path string, m map[string]any) {
			if items, ok := m["items"].(map[string]any); ok && len(items) == 0 {
				t.Errorf("%s: %s has items {}", tl.Name, path)
			}
		})
	}
}

// walkSchema calls f on every object of schema, with its path.
func walkSchema(v any, path string, f func(string, map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		f(path, x)
		for k, sub := range x {
			walkSchema(sub, path+"/"+k, f)
		}
	case []any:
		for i, sub := range x {
			walkSchema(sub, path+"/"+strings.Repeat("#", 1)+string(rune('0'+i%10)), f)
		}
	}
}
