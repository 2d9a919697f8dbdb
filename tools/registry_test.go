package tools

import (
	"context"
	"testing"

	"go.uber.org/goleak"
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
