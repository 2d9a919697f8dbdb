package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// planTasks and getRunHistory answer, in graph, the vx command that draws what they answer, and
// that command, run as it reads, writes the page.
func TestMCPGraphHints(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, runToolsWorkspace(""))
	gitCommitAll(t, dir)
	cs := mcpSession(t, dir)
	var hint struct {
		Graph string `json:"graph"`
		Run   *struct {
			RunID string `json:"runId"`
		} `json:"run"`
		Runs []struct {
			RunID string `json:"runId"`
		} `json:"invocations"`
	}
	decode := func(name string, args map[string]any) {
		t.Helper()
		hint.Graph, hint.Run, hint.Runs = "", nil, nil
		structured, text, isError := call(t, cs, name, args)
		if isError {
			t.Fatalf("%s: %s", name, text)
		}
		if err := json.Unmarshal(structured, &hint); err != nil {
			t.Fatal(err)
		}
	}
	drawn := func(command, page string) {
		t.Helper()
		argv := strings.Fields(command)
		if argv[0] != "vx" {
			t.Fatalf("the hint %q is not a vx command", command)
		}
		if out, err := vxCommand(t, dir, argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", command, err, out)
		}
		data, err := os.ReadFile(filepath.Join(dir, page))
		if err != nil || !strings.HasPrefix(string(data), "<!doctype html>") {
			t.Fatalf("%s wrote no page %s: %v", command, page, err)
		}
	}

	decode("planTasks", map[string]any{"tasks": []string{"test"}, "filter": []string{"app", "!lib"}})
	if want := "vx graph test --filter app --filter '!lib' --out vx-graph.html"; hint.Graph != want {
		t.Errorf("planTasks' graph hint %q, want %q", hint.Graph, want)
	}
	decode("planTasks", map[string]any{"tasks": []string{"build"}})
	drawn(hint.Graph, "vx-graph.html")

	decode("getRunHistory", map[string]any{})
	if hint.Graph != "" {
		t.Errorf("with no run, getRunHistory's graph hint is %q", hint.Graph)
	}
	if out, err := vxCommand(t, dir, "run", "build").CombinedOutput(); err != nil {
		t.Fatalf("vx run build: %v\n%s", err, out)
	}
	decode("getRunHistory", map[string]any{})
	if len(hint.Runs) != 1 || hint.Graph != "vx last --run "+hint.Runs[0].RunID+" --format html --out vx-run-"+hint.Runs[0].RunID+".html" {
		t.Fatalf("getRunHistory's graph hint %q for runs %+v", hint.Graph, hint.Runs)
	}
	decode("getRunHistory", map[string]any{"runId": hint.Runs[0].RunID})
	if hint.Run == nil || !strings.HasPrefix(hint.Graph, "vx last --run "+hint.Run.RunID+" ") {
		t.Fatalf("getRunHistory(runId)'s graph hint %q", hint.Graph)
	}
	drawn(hint.Graph, "vx-run-"+hint.Run.RunID+".html")
}
