package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Every tool's answer validates against the outputSchema it lists, checked by a JSON Schema
// validator; its text is the structuredContent, compact, within the answer budget.
func TestMCPAnswersValidateAgainstTheirSchemas(t *testing.T) {
	t.Parallel()
	dir, runs := recorded(t)
	cs := mcpSession(t, dir, "DEPLOY_TOKEN="+historySecret)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Resolved{}
	for _, tool := range list.Tools {
		js, err := json.Marshal(tool.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(js, &s); err != nil {
			t.Fatalf("%s: outputSchema: %v", tool.Name, err)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: outputSchema does not resolve: %v", tool.Name, err)
		}
		schemas[tool.Name] = r
	}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"listTasks", map[string]any{}},
		{"getCacheStats", map[string]any{}},
		{"getRunHistory", map[string]any{}},
		{"getRunHistory", map[string]any{"runId": runs[0]}},
		{"explainCacheKey", map[string]any{"taskId": "lib#build"}},
		{"whyDidThisRerun", map[string]any{"taskId": "lib#build"}},
		{"pruneCache", map[string]any{}},
		{"planInit", map[string]any{}},
		{"searchDocs", map[string]any{"query": "cache"}},
		{"checkLock", map[string]any{}},
		{"getConfig", map[string]any{}},
		{"getTaskLog", map[string]any{"taskId": "big#test", "runId": runs[0]}},
		{"getFailures", map[string]any{}},
		{"planTasks", map[string]any{"tasks": []string{"build", "test"}}},
		{"getWorkspaceInfo", map[string]any{}},
		{"runTasks", map[string]any{"tasks": []string{"build"}}},
	}
	seen := map[string]bool{}
	for _, c := range calls {
		seen[c.tool] = true
		got, text, isErr := call(t, cs, c.tool, c.args)
		if isErr {
			t.Errorf("%s(%v): %s", c.tool, c.args, text)
			continue
		}
		// Compact JSON: a pretty-printed answer would hold a line break between its tokens.
		if string(compact(t, []byte(text))) != string(compact(t, got)) || strings.Contains(text, "\n") || len(text) > 40_000 {
			t.Errorf("%s(%v): the text (%d characters) is not the compact structuredContent within the budget", c.tool, c.args, len(text))
		}
		var v any
		if err := json.Unmarshal(got, &v); err != nil {
			t.Fatal(err)
		}
		if err := schemas[c.tool].Validate(v); err != nil {
			t.Errorf("%s(%v) does not validate against its outputSchema: %v\n%.600s", c.tool, c.args, err, got)
		}
	}
	for name := range schemas {
		if !seen[name] {
			t.Errorf("tool %s is not checked against its schema", name)
		}
	}
}

// tools/list, as the server writes it, stays within 26 KB: what a client stores of the tools (the
// summaries' totals and getWorkspaceInfo's attention took it past 24 KB, the hints hosts that defer
// tools read in _meta past 25 KB). What the model reads of it is TestModelVisibleToolText's.
func TestMCPToolsListIsAffordable(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, historyWorkspace)
	cmd := vxCommand(t, dir, "mcp")
	// stdin stays open until the reply is read, as a host keeps it: a reply is never raced
	// against the grace vx gives the requests read before stdin's end.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("vx mcp: %v", err)
	}
	defer func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("vx mcp: %v", err)
		}
	}()
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n"+
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	var seen []string
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, `"id":1`) {
			seen = append(seen, line)
			continue
		}
		var r struct {
			Result mcp.ListToolsResult
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil || len(r.Result.Tools) != 15 {
			t.Fatalf("tools/list: %v, %d tools", err, len(r.Result.Tools))
		}
		t.Logf("tools/list: %d characters for %d tools", len(line), len(r.Result.Tools))
		if len(line) > 26_000 {
			t.Errorf("tools/list is %d characters, more than 26,000", len(line))
		}
		return
	}
	t.Fatalf("no reply to tools/list in %q", seen)
}

// A cursor that is malformed, of another question or stale is refused with a line naming cursor.
func TestMCPCursorsAreRefusedByName(t *testing.T) {
	t.Parallel()
	dir, runs := recorded(t)
	cs := mcpSession(t, dir, "DEPLOY_TOKEN="+historySecret)
	got, _, isErr := call(t, cs, "getTaskLog", map[string]any{"taskId": "big#test", "runId": runs[0]})
	var page struct {
		NextCursor string `json:"nextCursor"`
	}
	if err := json.Unmarshal(got, &page); err != nil || isErr || page.NextCursor == "" {
		t.Fatalf("getTaskLog(big#test) = %.300s: want a nextCursor", got)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"getTaskLog", map[string]any{"taskId": "big#test", "runId": runs[0], "cursor": "bm9wZQ"}, "not a cursor this server gave"},
		{"getTaskLog", map[string]any{"taskId": "lib#test", "runId": runs[0], "cursor": page.NextCursor}, "another question"},
		{"listTasks", map[string]any{"cursor": page.NextCursor}, "another question"},
		{"getConfig", map[string]any{"cursor": ""}, `"cursor"`},
	} {
		msg := expectRefusal(t, cs, tc.tool, tc.args, tc.want)
		if !strings.Contains(msg, "cursor") {
			t.Errorf("%s(%v) = %q: the refusal does not name cursor", tc.tool, tc.args, msg)
		}
	}
}

// mcp({ answerChars }) sets the budget: a workspace larger than it is answered in pages, each
// within it, and the cursors reach every project once.
func TestMCPAnswerCharsSetsTheBudget(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"vx.workspace.ts": "import { defineWorkspace } from '@vzn/vx/config'\nimport { mcp } from '@vzn/vx-mcp'\n" +
			"export default defineWorkspace({ projects: ['packages/*'], plugins: [mcp({ answerChars: 8000 })],\n" +
			"  tasks: { build: { command: 'true', inputs: ['src/**'], outputs: ['dist/**'] } } })\n",
	}
	for i := range 120 {
		files[fmt.Sprintf("packages/p%03d/package.json", i)] = fmt.Sprintf(`{"name":"p%03d"}`, i)
	}
	dir := writeWorkspace(t, files)
	cs := mcpSession(t, dir)
	seen := map[string]bool{}
	args := map[string]any{}
	for pages := 0; ; pages++ {
		got, text, isErr := call(t, cs, "getConfig", args)
		if isErr || len(text) > 8000 || pages > 120 {
			t.Fatalf("getConfig page %d: %d characters (error %v): %.300s", pages, len(text), isErr, text)
		}
		page := decode[struct {
			Config []struct {
				Name string `json:"name"`
			} `json:"config"`
			NextCursor string `json:"nextCursor"`
			Total      int    `json:"total"`
		}](t, got)
		for _, p := range page.Config {
			if seen[p.Name] {
				t.Fatalf("project %s answered twice", p.Name)
			}
			seen[p.Name] = true
		}
		if page.NextCursor == "" {
			if len(seen) != 120 || pages == 0 {
				t.Fatalf("%d projects in %d pages, want 120 in several", len(seen), pages+1)
			}
			return
		}
		if page.Total != 120 {
			t.Fatalf("total %d, want 120", page.Total)
		}
		args["cursor"] = page.NextCursor
	}
}

// runTasks answers a summary; its cursor continues in getRunHistory { runId }, which reads the
// run from the index: the pages hold every task of the run once, and nothing runs again.
func TestMCPRunTasksCursorContinuesInGetRunHistory(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"vx.workspace.ts": "import { defineWorkspace } from '@vzn/vx/config'\nimport { mcp } from '@vzn/vx-mcp'\n" +
			"export default defineWorkspace({ projects: ['packages/*'], plugins: [mcp({ answerChars: 8000 })],\n" +
			"  tasks: { build: { command: 'echo built >> ../../builds.log', cache: false } } })\n",
	}
	const n = 40
	for i := range n {
		files[fmt.Sprintf("packages/p%03d/package.json", i)] = fmt.Sprintf(`{"name":"p%03d"}`, i)
	}
	dir := writeWorkspace(t, files)
	cs := mcpSession(t, dir)
	got, text, isErr := call(t, cs, "runTasks", map[string]any{"tasks": []string{"build"}})
	first := decode[struct {
		ExitCode int `json:"exitCode"`
		Summary  struct {
			RunID  string            `json:"runId"`
			Tasks  []json.RawMessage `json:"tasks"`
			Totals struct{ Tasks, Misses int }
		} `json:"summary"`
		NextCursor string `json:"nextCursor"`
		Total      int    `json:"total"`
	}](t, got)
	if isErr || first.ExitCode != 0 || len(first.Summary.Tasks) != 0 || first.Summary.Totals.Misses != n || first.NextCursor == "" {
		t.Fatalf("runTasks: want a summary counting %d passes and listing none, with a cursor: %s", n, text)
	}
	seen := map[string]bool{}
	args := map[string]any{"runId": first.Summary.RunID, "cursor": first.NextCursor}
	for pages := 0; ; pages++ {
		got, text, isErr := call(t, cs, "getRunHistory", args)
		if isErr || len(text) > 8000 || pages > 2*n {
			t.Fatalf("getRunHistory page %d: %.300s", pages, text)
		}
		page := decode[struct {
			Run struct {
				Tasks []struct {
					TaskID string `json:"taskId"`
				} `json:"tasks"`
			} `json:"run"`
			NextCursor string `json:"nextCursor"`
		}](t, got)
		for _, task := range page.Run.Tasks {
			if seen[task.TaskID] {
				t.Fatalf("%s answered twice", task.TaskID)
			}
			seen[task.TaskID] = true
		}
		if page.NextCursor == "" {
			break
		}
		args["cursor"] = page.NextCursor
	}
	if len(seen) != n {
		t.Fatalf("the cursors reached %d of the run's %d tasks", len(seen), n)
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "builds.log")); strings.Count(string(log), "built") != n {
		t.Fatalf("the builds ran %d times, want %d: following the cursor must not run anything", strings.Count(string(log), "built"), n)
	}
}

// A long log of every kind of byte — quotes, backslashes, the HTML characters, control
// characters and escapes, carriage returns, multi-byte and invalid UTF-8, U+2028, a secret —
// paged through getTaskLog by the official SDK client: each page's text is its structuredContent,
// each validates against the tool's schema, and the pages join to what `vx last --log --full`
// prints. (The server writes the reply itself, not through encoding/json.)
func TestMCPLogPagesOfEveryByte(t *testing.T) {
	t.Parallel()
	var log strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&log, "50%%\rline %d \"q\" \\back\\ <a href='x'>&amp;</a> \x1b[31mred\x1b[0m tab\there ünï ❯ 日本 \u2028sep \xff\xfe bad token %s\r\n", i, historySecret)
	}
	dir := writeWorkspace(t, map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
import { mcp } from '@vzn/vx-mcp'
export default defineWorkspace({
  projects: ['packages/*'],
  plugins: [mcp()],
  tasks: { test: { command: 'cat log.bin; exit 1', exec: { env: { TOKEN: { secret: 'DEPLOY_TOKEN' } } } } },
})
`,
		"packages/app/package.json": `{"name": "app"}`,
		"packages/app/log.bin":      log.String(),
	})
	vxRun(t, dir, true, "run", "test")
	last := vxCommand(t, dir, "last", "--log", "app#test", "--full")
	last.Env = append(last.Env, "DEPLOY_TOKEN="+historySecret)
	want, err := last.Output()
	if err != nil {
		t.Fatal(err)
	}
	cs := mcpSession(t, dir, "DEPLOY_TOKEN="+historySecret)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var schema *jsonschema.Resolved
	for _, tool := range list.Tools {
		if tool.Name == "getTaskLog" {
			js, _ := json.Marshal(tool.OutputSchema)
			var s jsonschema.Schema
			if err := json.Unmarshal(js, &s); err != nil {
				t.Fatal(err)
			}
			if schema, err = s.Resolve(nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	var joined strings.Builder
	args := map[string]any{"taskId": "app#test"}
	for page := 0; ; page++ {
		got, text, isErr := call(t, cs, "getTaskLog", args)
		if isErr || string(compact(t, got)) != string(compact(t, []byte(text))) || strings.Contains(text, "\n") {
			t.Fatalf("page %d: isError %v, or its text is not its structuredContent:\n%.300s\n%.300s", page, isErr, text, got)
		}
		var v any
		if err := json.Unmarshal(got, &v); err != nil || schema.Validate(v) != nil {
			t.Fatalf("page %d does not validate: %v %v", page, err, schema.Validate(v))
		}
		p := decode[struct {
			Output     string `json:"output"`
			NextCursor string `json:"nextCursor"`
		}](t, got)
		if strings.Contains(p.Output, historySecret) {
			t.Fatalf("page %d shows the secret", page)
		}
		if page > 0 {
			joined.WriteString(p.Output)
		}
		if p.NextCursor == "" {
			if page < 2 {
				t.Fatalf("a %d-byte log answered in %d pages", log.Len(), page+1)
			}
			break
		}
		args["cursor"] = p.NextCursor
	}
	// JSON carries text: each byte of invalid UTF-8 arrives as U+FFFD, as encoding/json writes it.
	text := string([]rune(string(want)))
	if got := joined.String(); got != strings.TrimSuffix(text, "\n") && got != text {
		t.Fatalf("the pages join to %d bytes that differ from vx last --log --full's %d:\n got %.200q\nwant %.200q",
			len(got), len(want), got, want)
	}
}
