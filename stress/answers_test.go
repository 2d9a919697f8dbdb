package stress

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/workspace"
)

// answerBudget is the default answer budget of `vx mcp`, in characters.
const answerBudget = 40_000

// TestAnswersAtScale generates a workspace of 1,000 projects (5,000 without -short), two tasks
// each, mcp() declared, a lock, and a history seeded straight into the index: a full run of hits
// and a failing run whose failed tasks each printed 100 KB. It calls every tool with its default
// arguments (and the questions an agent asks first) through a real `vx mcp` and the official Go
// SDK client: every answer's text is within the budget, and every cursor chain yields each
// element of the whole exactly once. It logs each answer's size (docs/performance.md).
//
// VX_ANSWERS_BIN measures another vx binary (an older one, for the before-and-after figures) and
// only logs: VX_ANSWERS_BIN=/tmp/vx-before go test ./stress -run TestAnswersAtScale -v.
func TestAnswersAtScale(t *testing.T) {
	sizes := []int{1000}
	if !testing.Short() {
		sizes = append(sizes, 5000)
	}
	bin, measureOnly := os.Getenv("VX_ANSWERS_BIN"), true
	if bin == "" {
		bin, measureOnly = buildVX(t), false
	}
	for _, n := range sizes {
		t.Run(fmt.Sprintf("%d-projects", n), func(t *testing.T) {
			root, runs := largeWorkspace(t, bin, n)
			cs := sdkSession(t, bin, root)
			failed := fmt.Sprintf("p%05d#test", 0)
			for _, q := range []struct {
				tool  string
				args  map[string]any
				lists []string // the windowed lists, as JSON paths
			}{
				{"getConfig", map[string]any{}, []string{"config"}},
				{"getConfig", map[string]any{"target": "build"}, []string{"config"}},
				{"getConfig", map[string]any{"affected": true}, []string{"config"}},
				{"listTasks", map[string]any{"affected": true}, []string{"projects"}},
				{"planTasks", map[string]any{"all": true}, []string{"plan.criticalPath", "plan.tasks"}},
				{"planTasks", map[string]any{"tasks": []string{"build"}}, []string{"plan.criticalPath", "plan.tasks"}},
				{"checkLock", map[string]any{}, []string{"lock.problems", "lock.drift", "lock.notAuditedTasks", "lock.auditedTasks"}},
				{"listTasks", map[string]any{}, []string{"projects"}},
				{"planInit", map[string]any{}, []string{"init.todos", "init.notes", "init.files", "init.projects"}},
				{"getRunHistory", map[string]any{}, []string{"invocations", "runs", "history"}},
				{"getRunHistory", map[string]any{"runId": runs.hits}, []string{"run.tasks", "run.requested"}},
				{"getRunHistory", map[string]any{"runId": runs.failed}, []string{"run.tasks", "run.requested"}},
				{"getFailures", map[string]any{}, []string{"tasks"}},
				{"getTaskLog", map[string]any{"taskId": failed}, nil},
				{"getCacheStats", map[string]any{}, nil},
				{"explainCacheKey", map[string]any{"taskId": "p00001#build"}, nil},
				{"whyDidThisRerun", map[string]any{"taskId": "p00001#build"}, nil},
				{"pruneCache", map[string]any{"maxSize": "0"}, []string{"prune.evictedEntries"}},
				{"searchDocs", map[string]any{"query": "cache", "limit": 100}, []string{"docs.hits"}},
				{"getWorkspaceInfo", map[string]any{}, []string{"configErrors", "flakyTasks", "flakyReport.value.tasks"}},
			} {
				first, pages := followCursors(t, cs, q.tool, q.args, q.lists, measureOnly)
				t.Logf("%s %v: %d characters, %d pages", q.tool, q.args, first, pages)
			}
			if measureOnly {
				runTasksAtScale(t, cs, n, measureOnly)
				return
			}

			// listTasks with no narrowing argument is a summary: totals, task names and tags.
			text := callText(t, cs, "listTasks", map[string]any{})
			if len(text) > 8000 || !strings.Contains(text, `"taskNames":[{"name":"build","projects":`+fmt.Sprint(n)) {
				t.Errorf("listTasks' first answer at %d projects is %d characters (want a summary under 8,000): %.300s", n, len(text), text)
			}
			checkFirstAnswers(t, cs, n)
			// A run of all hits answers a summary of a few hundred characters; a failing run names
			// its failed tasks with their exit codes.
			text = callText(t, cs, "getRunHistory", map[string]any{"runId": runs.hits})
			if len(text) > 2000 {
				t.Errorf("the summary of a run of %d hits is %d characters, more than 2,000", 2*n, len(text))
			}
			text = callText(t, cs, "getRunHistory", map[string]any{"runId": runs.failed})
			for i := range failedTasks {
				id := fmt.Sprintf("p%05d#test", i)
				if !strings.Contains(text, `"taskId":"`+id+`","status":"failed"`) {
					t.Errorf("the failing run's summary does not name %s as failed: %.600s", id, text)
				}
			}
			// Last: its runs and entries would change the first answers checked above.
			runTasksAtScale(t, cs, n, measureOnly)
		})
	}
}

// runTasksAtScale runs build through runTasks on n projects, without -short at 1,000: the builds
// run, then they all hit, whose answer is a summary under 600 characters (lean: counts and a
// cursor, no rows).
func runTasksAtScale(t *testing.T, cs *mcp.ClientSession, n int, measureOnly bool) {
	t.Helper()
	if testing.Short() || n != 1000 {
		return
	}
	// A real run through runTasks: the builds run, then they all hit.
	for _, label := range []string{"cold", "every task a hit"} {
		text, err := askTool(cs, "runTasks", map[string]any{"tasks": []string{"build"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("runTasks {tasks: [build]} (%s): %d characters", label, len(text))
		if label != "cold" && !measureOnly && len(text) > 600 {
			t.Errorf("runTasks' answer for %d hits is %d characters, more than 600", n, len(text))
		}
	}
}

// checkFirstAnswers checks the first answers of getRunHistory, getWorkspaceInfo, getCacheStats,
// planTasks, getConfig, checkLock, planInit and searchDocs with no narrowing argument: each begins with its totals and what needs attention, and
// is under 8,000 characters at n projects; the details are behind the narrowing arguments (the
// cursors, which followCursors follows, reach every element).
func checkFirstAnswers(t *testing.T, cs *mcp.ClientSession, n int) {
	t.Helper()
	for _, q := range []struct {
		tool  string
		args  map[string]any
		wants []string
	}{
		{"getRunHistory", map[string]any{}, []string{`{"limit":50,"totals":{"runs":2,"runsByStatus":{"failed":1,"ok":1},"tasks":` + fmt.Sprint(2*n) + `,"failing":{"flaky":4}},"invocations":[`,
			fmt.Sprintf(`"history":[{"taskId":"p%05d#test",`, n-1), `"nextCursor"`}},
		{"getWorkspaceInfo", map[string]any{}, []string{`{"attention":["4 flaky task(s) (one cache key both passed and failed): p00000#test, p00001#test, p00002#test and 1 more"],`,
			`"projects":` + fmt.Sprint(n) + `,"tasks":` + fmt.Sprint(2*n)}},
		{"getCacheStats", map[string]any{}, []string{`{"scope":"all","entryCount":` + fmt.Sprint(n) + `,`}},
		{"planTasks", map[string]any{"all": true}, []string{`{"exitCode":0,"plan":{"workers":`, `"totals":{"tasks":` + fmt.Sprint(2*n) + `,`, `"nextCursor"`}},
		{"planTasks", map[string]any{"tasks": []string{"build"}}, []string{`"totals":{"tasks":` + fmt.Sprint(n) + `,`, `"missesByName":{"build":`}},
		{"getConfig", map[string]any{}, []string{`{"exitCode":0,"config":[{"name":`, `"nextCursor"`}},
		{"checkLock", map[string]any{}, []string{`{"exitCode":0,"lock":{"exitCode":0,"file":"vx.lock","written":false,"upToDate":true,"audited":` + fmt.Sprint(2*n) + `,"notAudited":0,"problems":[]`, `"auditedTasks":[]`, `"nextCursor"`}},
		{"planInit", map[string]any{}, []string{`{"exitCode":0,"init":{"mode":"scripts","source":"package.json scripts",`, `"nextCursor"`}},
		{"searchDocs", map[string]any{"query": "cache", "limit": 100}, []string{`"url":"docs/cache.md#the-cache","text":"","page":"cache","heading":"The cache"`, `"textOmitted":true`}},
	} {
		text := callText(t, cs, q.tool, q.args)
		if len(text) > 8000 {
			t.Errorf("%s %v: the first answer at %d projects is %d characters, over 8,000: %.300s", q.tool, q.args, n, len(text), text)
		}
		for _, want := range q.wants {
			if !strings.Contains(text, want) {
				t.Errorf("%s %v: the first answer lacks %s: %.600s", q.tool, q.args, want, text)
			}
		}
	}
	// The details: one project's statistics and runs whole, one project's cache numbers.
	text := callText(t, cs, "getRunHistory", map[string]any{"project": "p00000"})
	if !strings.Contains(text, `"history":[{"taskId":"p00000#test","id":"p00000#test","executions":2,"runs":2,`) || strings.Contains(text, "nextCursor") {
		t.Errorf("getRunHistory {project: p00000} is not that project's whole history: %.600s", text)
	}
	text = callText(t, cs, "getCacheStats", map[string]any{"scope": map[string]any{"project": "p00001"}})
	if !strings.Contains(text, `{"scope":{"project":"p00001"},"entryCount":1,`) {
		t.Errorf("getCacheStats {scope: {project: p00001}}: %s", text)
	}
}

// failedTasks is how many tasks of the seeded failing run failed, each printing failedLogBytes.
const (
	failedTasks    = 4
	failedLogBytes = 100 << 10
)

// seededRuns are the run ids of the seeded history.
type seededRuns struct{ hits, failed string }

// largeWorkspace writes n projects under packages/, each with a package.json (scripts, and a
// dependency on the project whose number is a tenth of its own, so the graph has depth), commits
// them, writes vx.lock with the real vx, and seeds the index.
func largeWorkspace(t *testing.T, bin string, n int) (string, seededRuns) {
	t.Helper()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "vx.workspace.ts"), `import { defineWorkspace } from '@vzn/vx/config'
import { mcp } from '@vzn/vx-mcp'
export default defineWorkspace({
  projects: ['packages/*'],
  plugins: [mcp()],
  tasks: {
    build: { command: 'mkdir -p dist && cp src/index.ts dist/', dependsOn: ['^build'], inputs: ['src/**'], outputs: ['dist/**'] },
    test: { command: 'true', dependsOn: ['build'] },
  },
})
`)
	writeFile(t, filepath.Join(root, "package.json"), `{"name":"large","private":true,"workspaces":["packages/*"]}`+"\n")
	writeFile(t, filepath.Join(root, ".gitignore"), ".vx/\n")
	for i := range n {
		name := fmt.Sprintf("p%05d", i)
		deps := ""
		if i > 0 {
			deps = fmt.Sprintf(`,"dependencies":{"p%05d":"1.0.0"}`, i/10)
		}
		writeFile(t, filepath.Join(root, "packages", name, "package.json"),
			fmt.Sprintf(`{"name":%q,"version":"1.0.0","scripts":{"build":"tsc -b","test":"vitest run"}%s}`+"\n", name, deps))
		writeFile(t, filepath.Join(root, "packages", name, "src", "index.ts"), fmt.Sprintf("export const n = %d\n", i))
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "large"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = root, crashEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	// An uncommitted edit of the root of the graph: every project is affected.
	writeFile(t, filepath.Join(root, "packages", "p00000", "src", "index.ts"), "export const n = -1\n")
	cmd := exec.Command(bin, "lock")
	cmd.Dir, cmd.Env = root, crashEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("vx lock: %v\n%s", err, out)
	}
	// The entries go to the shared store the server resolves for this checkout, as a run's would.
	dirs := workspace.StoreDirs(root, "", "", os.Getenv)
	return root, seedHistory(t, dirs.Checkout, dirs.Shared, n)
}

// seedHistory records, straight into the index, a run in which every task hit, and a later run
// in which the first failedTasks test tasks failed (each printing failedLogBytes) and blocked
// nothing else; every build has a cache entry.
func seedHistory(t *testing.T, dir, shared string, n int) seededRuns {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dir, store.Options{SharedDir: shared})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	host, _ := os.Hostname()
	now := time.Now().Add(-time.Hour)
	blob, err := st.CAS().Put([]byte("built\n"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range n {
		ids = append(ids, fmt.Sprintf("p%05d#build", i), fmt.Sprintf("p%05d#test", i))
	}
	hash := func(id string) string {
		sum := sha256.Sum256([]byte(id))
		return hex.EncodeToString(sum[:])
	}
	for i, id := range ids {
		if i%2 == 1 {
			continue
		}
		project, _, _ := strings.Cut(id, "#")
		if err := st.PutEntry(ctx, store.Entry{Hash: hash(id), TaskID: id, Project: project, Command: "build",
			OutputsBlob: blob, LogBlob: blob, Size: 12, Duration: 800 * time.Millisecond, Created: now, LastUsed: now}); err != nil {
			t.Fatal(err)
		}
	}
	record := func(at time.Time, failing bool) string {
		id := store.NewRunID(at)
		if err := st.BeginRun(ctx, store.Run{ID: id, Started: at, Host: host, PID: os.Getpid(),
			Args: []string{"run", "build", "test"}, Requested: ids, TaskCount: len(ids)}); err != nil {
			t.Fatal(err)
		}
		var b store.Batch
		for i, task := range ids {
			project, name, _ := strings.Cut(task, "#")
			e := store.Execution{RunID: id, TaskID: task, Project: project, Task: name, Ord: i, Status: "hit",
				Started: at, Duration: 20 * time.Millisecond, Hash: hash(task), CacheSource: "local", Saved: 800 * time.Millisecond}
			if failing && name == "test" && i/2 < failedTasks {
				code := 1
				log := fmt.Sprintf("%s: FAIL src/index.test.ts:%d:3\n%s", task, i+1, strings.Repeat("expected 1, got 2 <diff>\n", failedLogBytes/25))
				logBlob, err := st.CAS().Put([]byte(log))
				if err != nil {
					t.Fatal(err)
				}
				e.Status, e.ExitCode, e.CacheSource, e.Saved, e.LogBlob, e.LogSource = "failed", &code, "", 0, logBlob, "failure"
			}
			b.Executions = append(b.Executions, e)
		}
		if err := st.Record(ctx, b); err != nil {
			t.Fatal(err)
		}
		status, code := store.RunOK, 0
		if failing {
			status, code = store.RunFailed, 1
		}
		if err := st.FinishRun(ctx, id, status, code, at.Add(2*time.Second)); err != nil {
			t.Fatal(err)
		}
		return id
	}
	return seededRuns{hits: record(now, false), failed: record(now.Add(time.Minute), true)}
}

// sdkSession starts bin's `vx mcp` in dir and connects the official Go SDK client.
func sdkSession(t *testing.T, bin, dir string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(bin, "mcp")
	cmd.Dir, cmd.Env = dir, crashEnv()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "vx-stress", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to vx mcp: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// callText calls a tool and answers its text; a tool error fails the test.
func callText(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	text, err := askTool(cs, tool, args)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// askTool calls a tool and answers its text, or the tool's error.
func askTool(cs *mcp.ClientSession, tool string, args map[string]any) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("%s(%v): %w", tool, args, err)
	}
	if len(res.Content) != 1 {
		return "", fmt.Errorf("%s(%v): %d contents", tool, args, len(res.Content))
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		return "", fmt.Errorf("%s(%v): %s", tool, args, text)
	}
	return text, nil
}

// followCursors asks a question and follows its cursors to the end: every page within the budget,
// the lists' elements each seen once, as many as the first page's total says. It answers the first
// page's size and the number of pages.
func followCursors(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, lists []string, measureOnly bool) (int, int) {
	t.Helper()
	seen := map[string]bool{}
	elements, total, first, pages := 0, -1, 0, 0
	var output strings.Builder
	next := map[string]any{}
	for k, v := range args {
		next[k] = v
	}
	for {
		text, err := askTool(cs, tool, next)
		if err != nil && measureOnly {
			t.Logf("%v", err)
			return 0, 0
		}
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if pages == 1 {
			first = len(text)
		}
		if len(text) > answerBudget && !measureOnly {
			t.Errorf("%s %v page %d: %d characters, over the budget of %d", tool, args, pages, len(text), answerBudget)
		}
		var page map[string]any
		if err := json.Unmarshal([]byte(text), &page); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if measureOnly {
			return first, 1
		}
		if tot, ok := page["total"].(float64); ok && total < 0 && tool != "searchDocs" {
			total = int(tot)
		}
		if tool == "getTaskLog" && pages > 1 {
			output.WriteString(page["output"].(string))
		}
		for _, path := range lists {
			for _, el := range at(page, path) {
				js, _ := json.Marshal(el)
				key := path + string(js)
				if seen[key] {
					t.Errorf("%s %v: %s element seen twice: %.200s", tool, args, path, js)
				}
				seen[key] = true
				elements++
			}
		}
		c, ok := page["nextCursor"].(string)
		if !ok {
			break
		}
		next["cursor"] = c
		if pages > 10_000 {
			t.Fatalf("%s %v: the cursors never end", tool, args)
		}
	}
	if total >= 0 && len(lists) > 0 && elements != total {
		t.Errorf("%s %v: the cursors yielded %d elements, the answer says the whole holds %d", tool, args, elements, total)
	}
	if tool == "getTaskLog" && pages > 1 && output.Len() == 0 {
		t.Errorf("getTaskLog's pages hold no output")
	}
	return first, pages
}

// at answers the list at a dotted path of a JSON object.
func at(v map[string]any, path string) []any {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := v[p].(map[string]any)
		if !ok {
			return nil
		}
		v = next
	}
	list, _ := v[parts[len(parts)-1]].([]any)
	return slices.Clone(list)
}
