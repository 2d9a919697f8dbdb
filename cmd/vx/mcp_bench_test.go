package main

import "testing"

// The config and plan tools on the same generated workspace as BenchmarkMCPHistoryTools (500
// projects, 1,500 tasks, 1,000 recorded runs).
//
//	go test ./cmd/vx/ -run '^$' -bench 'MCPConfigTools' -benchtime 100x
var configBenchCalls = []benchCall{
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
	benchmarkTools(b, configBenchCalls)
}
