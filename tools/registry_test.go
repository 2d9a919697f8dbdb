package tools

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/engine/session"
	"github.com/vzn/vx/engine/workspace"
	"github.com/vzn/vx/internal/testkit"
)

func TestMain(m *testing.M) {
	cleanup := testkit.IsolateCacheHome()
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) { cleanup(); os.Exit(code) }))
}

// sharedDirOf is the shared store a workspace at root uses by default, where the tools read it.
func sharedDirOf(root string) string { return workspace.StoreDirs(root, "", "", nil).Shared }

// What a model reads of the tools — names, descriptions and input schemas — stays within 10 KB
// for the fifteen, so that listing them costs an agent little.
func TestToolDefinitionsAreAffordable(t *testing.T) {
	tools := All(&Deps{}).WithLister(nil).List(context.Background())
	if len(tools) != 15 {
		t.Fatalf("%d tools, want 15", len(tools))
	}
	size := 0
	for _, t := range tools {
		size += len(t.Name) + len(t.Description) + len(t.InputSchema)
	}
	if size > 10_000 {
		t.Errorf("names, descriptions and input schemas take %d bytes, more than 10,000", size)
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
		!strings.Contains(string(js), `"hits"`) {
		t.Errorf("searchDocs with wait_for_previous: %.200s, %v", js, err)
	}
	if _, err := search.Call(ctx, &tool.Call{Args: json.RawMessage(`{"query":"cache key","bogus":1}`)}); err == nil ||
		!strings.HasPrefix(err.Error(), `unknown argument "bogus" (accepted: query, `) {
		t.Errorf("searchDocs with bogus: %v", err)
	}
}

// Every schema every vx tool lists passes the portability check the Inspector's --strict applies
// (tool.CheckSchema), so a new field cannot bring a bare true back; and getWorkspaceInfo's section
// values are described as the objects they are.
func TestEverySchemaIsPortable(t *testing.T) {
	for _, tl := range All(&Deps{}).WithLister(nil).List(context.Background()) {
		for what, schema := range map[string]json.RawMessage{"inputSchema": tl.InputSchema, "outputSchema": tl.OutputSchema} {
			if err := tool.CheckSchema(schema); err != nil {
				t.Errorf("%s: %s %v", tl.Name, what, err)
			}
		}
		if tl.Name != "getWorkspaceInfo" {
			continue
		}
		var out struct {
			Properties map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(tl.OutputSchema, &out); err != nil {
			t.Fatal(err)
		}
		for _, section := range []string{"cache", "flakyReport", "sandboxReport", "lock", "remoteCache"} {
			if got := string(out.Properties[section].Properties["value"]); got != `{"type":"object"}` {
				t.Errorf("getWorkspaceInfo: %s.value is %s", section, got)
			}
		}
	}
}

// testDeps answers the tools' dependencies over a session opened with opts, closed when the test
// ends.
func testDeps(t testing.TB, opts session.Options) *Deps {
	t.Helper()
	d := &Deps{Session: session.Open(opts)}
	t.Cleanup(func() { d.Session.Close() })
	return d
}
