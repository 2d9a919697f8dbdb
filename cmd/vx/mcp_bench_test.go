package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vzn/vx/engine/workspace"
	"github.com/vzn/vx/tools"
)

// The config and plan tools on the same generated workspace as BenchmarkMCPHistoryTools (500
// projects, 1,500 tasks, 1,000 recorded runs).
//
//	go test ./cmd/vx/ -run '^$' -bench 'MCPConfigTools' -benchtime 100x
var configBenchCalls = []struct {
	name, tool string
	args       map[string]any
}{
	{"listTasks", "listTasks", map[string]any{}},
	{"listTasks/project", "listTasks", map[string]any{"project": "p250"}},
	{"listTasks/filter", "listTasks", map[string]any{"filter": "p250..."}},
	{"getConfig/task", "getConfig", map[string]any{"target": "p250#build"}},
	{"getWorkspaceInfo", "getWorkspaceInfo", map[string]any{}},
	{"checkLock", "checkLock", map[string]any{}},
	{"searchDocs", "searchDocs", map[string]any{"query": "cache key"}},
	{"planInit", "planInit", map[string]any{}},
	{"planTasks/project", "planTasks", map[string]any{"tasks": []string{"test"}, "filter": "p250"}},
}

// BenchmarkMCPConfigTools measures each tool as BenchmarkMCPHistoryTools does: "handler" in
// process (the tool's own latency), "stdio" through `vx mcp` and the Go SDK client.
func BenchmarkMCPConfigTools(b *testing.B) {
	dir := b.TempDir()
	ctx := context.Background()
	if err := writeBenchHistory(ctx, dir, benchProjects, benchRuns); err != nil {
		b.Fatal(err)
	}
	env := &tools.Env{
		Loader: workspace.NewLoader(workspace.Options{Dir: dir, Console: io.Discard, Version: version}),
		Exe:    os.Args[0], Getenv: os.Getenv, Stderr: io.Discard, Version: version,
	}
	reg := tools.All(env)
	for _, c := range configBenchCalls {
		tool, ok := reg.Lookup(ctx, c.tool)
		if !ok {
			b.Fatalf("no tool %s", c.tool)
		}
		args, _ := json.Marshal(c.args)
		callOnce := func() []byte {
			v, err := tool.Handler(ctx, &tools.Call{Args: args, Progress: func(float64, float64, string) {}})
			if err != nil {
				b.Fatalf("%s(%s): %v", c.tool, args, err)
			}
			out, err := json.Marshal(v)
			if err != nil {
				b.Fatal(err)
			}
			return out
		}
		out := callOnce() // the first call evaluates the config
		b.Run("handler/"+c.name, func(b *testing.B) {
			for b.Loop() {
				callOnce()
			}
			b.ReportMetric(float64(len(out)), "answer-bytes")
		})
	}

	cmd := vxCommand(b, dir, "mcp")
	cmd.Stderr = io.Discard
	client := mcp.NewClient(&mcp.Implementation{Name: "vx-bench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	for _, c := range configBenchCalls {
		callOnce := func() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
			if err != nil || res.IsError {
				b.Fatalf("%s(%v): %v %v", c.tool, c.args, err, res)
			}
		}
		callOnce()
		b.Run("stdio/"+c.name, func(b *testing.B) {
			for b.Loop() {
				callOnce()
			}
		})
	}
}
