package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/vzn/vx/actor/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// What a model reads of the tools — their descriptions and input schemas — stays within 10 KB
// for the fifteen, so that listing them costs an agent little.
func TestToolDefinitionsAreAffordable(t *testing.T) {
	tools := All(&Deps{}).WithLister(nil).List(context.Background())
	if len(tools) != 15 {
		t.Fatalf("%d tools, want 15", len(tools))
	}
	size := 0
	for _, t := range tools {
		size += len(t.Description) + len(t.InputSchema)
	}
	if size > 10_000 {
		t.Errorf("descriptions and input schemas take %d bytes, more than 10,000", size)
	}
}

// vx's own tools take a call carrying the host key Gemini CLI adds (wait_for_previous) and still
// refuse any other key they do not take.
func TestToolsTakeTheHostsKeys(t *testing.T) {
	ctx := context.Background()
	search, ok := All(&Deps{}).WithLister(nil).Lookup(ctx, "searchDocs")
	if !ok {
		t.Fatal("no searchDocs")
	}
	if js, err := search.Call(ctx, &tool.Call{Args: json.RawMessage(`{"query":"cache key","wait_for_previous":true}`)}); err != nil ||
		!strings.Contains(string(js), `"sections"`) {
		t.Errorf("searchDocs with wait_for_previous: %.200s, %v", js, err)
	}
	if _, err := search.Call(ctx, &tool.Call{Args: json.RawMessage(`{"query":"cache key","bogus":1}`)}); err == nil ||
		err.Error() != `unknown argument "bogus"` {
		t.Errorf("searchDocs with bogus: %v", err)
	}
}
