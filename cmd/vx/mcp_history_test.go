package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/engine/session"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/workspace"
	"github.com/vzn/vx/tools"
)

// The history tools: getCacheStats, getRunHistory, explainCacheKey, whyDidThisRerun, getTaskLog
// and getFailures, through the real binary and the Go SDK client.

const historySecret = "tok-hist-5ec2e7"

// historyWorkspace has a library whose test fails printing a coloured tsc-style error with a
// file:line:col and the secret, an app whose test it blocks, and a project whose failing test
// prints far more than 64 KiB.
var historyWorkspace = map[string]string{
	"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
import { mcp } from '@vzn/vx-mcp'
export default defineWorkspace({
  projects: ['packages/*'],
  plugins: [mcp()],
  tasks: {
    build: { command: 'sh build.sh', dependsOn: ['^build'], inputs: ['src/**', 'build.sh'], outputs: ['dist/**'] },
    test: { command: 'sh test.sh', dependsOn: ['build', '^test'], exec: { env: { TOKEN: { secret: 'DEPLOY_TOKEN' } } } },
  },
})
`,
	"packages/lib/package.json": `{"name": "lib"}`,
	"packages/lib/src/index.ts": "export const x: number = 'one'\n",
	"packages/lib/build.sh":     "mkdir -p dist && cp src/index.ts dist/index.js && echo lib built\n",
	"packages/lib/test.sh": `printf '\033[1m\033[31msrc/index.ts(1,14)\033[0m: error TS2322: bad token %s\n' "$TOKEN"
echo 'src/index.ts:1:14 - error TS2322: Type string is not assignable to type number.'
echo '    at check (src/missing.ts:3:3)'
exit 2
`,
	"packages/app/package.json": `{"name": "app", "dependencies": {"lib": "*"}}`,
	"packages/app/src/main.ts":  "import { x } from 'lib'\n",
	"packages/app/build.sh":     "mkdir -p dist && cp src/main.ts dist/main.js && echo app built\n",
	"packages/app/test.sh":      "echo app ok\n",
	"packages/big/package.json": `{"name": "big"}`,
	"packages/big/src/big.ts":   "export {}\n",
	"packages/big/build.sh":     "echo big built\n",
	"packages/big/test.sh":      "echo 'first line'\nseq 1 30000\necho \"last line $TOKEN\"\necho 'src/big.ts:1:1: error: too big'\nexit 1\n",
}

// vxRun runs `vx args…` in dir with the secret set; a failing run is expected when fail is true.
func vxRun(t *testing.T, dir string, fail bool, args ...string) {
	t.Helper()
	cmd := vxCommand(t, dir, args...)
	cmd.Env = append(cmd.Env, "DEPLOY_TOKEN="+historySecret)
	out, err := cmd.CombinedOutput()
	if (err != nil) != fail {
		t.Fatalf("vx %s: %v (want failure: %v)\n%s", strings.Join(args, " "), err, fail, out)
	}
}

// cliJSONEnv is cliJSON with the secret set, as the server has it.
func cliJSONEnv(t *testing.T, dir string, args ...string) json.RawMessage {
	t.Helper()
	cmd := vxCommand(t, dir, append(args, "--format", "json")...)
	cmd.Env = append(cmd.Env, "DEPLOY_TOKEN="+historySecret)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("vx %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return compact(t, out)
}

func decode[T any](t *testing.T, data []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("decode %T: %v\n%s", v, err, data)
	}
	return v
}

// recorded runs the history scenario in a fresh workspace: run 1 fails (lib#test, big#test) and
// blocks app#test, run 2 hits every build, run 3 follows an edit of lib's source. It answers the
// folder and the run ids, oldest first.
func recorded(t *testing.T) (dir string, runIDs []string) {
	t.Helper()
	dir = writeWorkspace(t, historyWorkspace)
	vxRun(t, dir, true, "run", "build", "test")
	vxRun(t, dir, false, "run", "build")
	if err := os.WriteFile(filepath.Join(dir, "packages/lib/src/index.ts"), []byte("export const x: number = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vxRun(t, dir, false, "run", "build")
	list := decode[[]struct {
		RunID string `json:"runId"`
	}](t, cliJSONEnv(t, dir, "last", "--list"))
	if len(list) != 3 {
		t.Fatalf("%d runs recorded, want 3", len(list))
	}
	for i := len(list) - 1; i >= 0; i-- {
		runIDs = append(runIDs, list[i].RunID)
	}
	return dir, runIDs
}

func TestMCPHistoryTools(t *testing.T) {
	t.Parallel()
	dir, runs := recorded(t)
	cs := mcpSession(t, dir, "DEPLOY_TOKEN="+historySecret)
	var texts []string // every answer, to look for the secret
	ask := func(tool string, args any) (json.RawMessage, bool) {
		t.Helper()
		got, text, isErr := call(t, cs, tool, args)
		texts = append(texts, text)
		if !isErr && len(got) == 0 {
			t.Errorf("%s(%v): no structuredContent (%s)", tool, args, text)
		}
		return got, isErr
	}

	t.Run("getCacheStats", func(t *testing.T) {
		got, isErr := ask("getCacheStats", map[string]any{})
		want := cliJSONEnv(t, dir, "cache", "stats")
		if isErr || string(compact(t, got)) != string(want) {
			t.Errorf("getCacheStats = %s\nvx cache stats = %s", got, want)
		}
		s := decode[struct {
			Entries, Runs24h, Hits24h int
			HitRate                   *float64
		}](t, got)
		// Builds: 3 misses, then 3 hits, then 2 misses (lib, app) and a hit (big); no test passed.
		if s.Entries != 5 || s.Runs24h != 11 || s.Hits24h != 4 || s.HitRate == nil {
			t.Errorf("getCacheStats = %s", got)
		}
		got, isErr = ask("getCacheStats", map[string]any{"scope": map[string]any{"project": "lib"}})
		want = cliJSONEnv(t, dir, "cache", "stats", "--project", "lib")
		if isErr || string(compact(t, got)) != string(want) || !strings.Contains(string(got), `"scope":{"project":"lib"}`) {
			t.Errorf("getCacheStats(lib) = %s\nvx cache stats --project lib = %s", got, want)
		}
	})

	t.Run("getRunHistory", func(t *testing.T) {
		got, isErr := ask("getRunHistory", map[string]any{})
		h := decode[struct {
			Limit int
			Runs  []struct {
				RunID    string
				OK       bool
				ExitCode int
				Tasks    []map[string]any
			} `json:"invocations"`
			Tasks []map[string]any `json:"history"`
		}](t, got)
		if isErr || h.Limit != 50 || len(h.Runs) != 3 || h.Runs[0].RunID != runs[2] || h.Runs[2].OK || h.Runs[2].ExitCode != 1 {
			t.Fatalf("getRunHistory = %s", got)
		}
		byTask := map[string]map[string]any{}
		for _, task := range h.Runs[2].Tasks {
			byTask[task["taskId"].(string)] = task
		}
		if lib := byTask["lib#test"]; lib["status"] != "failed" || lib["exitCode"] != 2.0 {
			t.Errorf("lib#test in the failed run: %v", lib)
		}
		if app := byTask["app#test"]; app["status"] != "blocked" || app["blockedBy"] != "lib#test" {
			t.Errorf("app#test in the failed run: %v", app)
		}
		stats := map[string]map[string]any{}
		for _, s := range h.Tasks {
			stats[s["taskId"].(string)] = s
		}
		if b := stats["lib#build"]; b["executions"] != 3.0 || b["hitRate"] != 0.333 || b["successRate"] != 1.0 || b["p50Ms"] == nil ||
			b["failureMode"] != nil || b["maxCpuParallelism"] == nil || b["maxPeakRssBytes"] == nil {
			t.Errorf("lib#build statistics: %v", b)
		}
		if lt := stats["lib#test"]; lt["failureMode"] != "deterministic" || lt["successRate"] != 0.0 {
			t.Errorf("lib#test statistics: %v", lt)
		}

		got, _ = ask("getRunHistory", map[string]any{"project": "lib", "task": "build", "limit": 2})
		// Two runs, and the two executions of lib#build in them.
		if !strings.Contains(string(got), `"limit":2`) || strings.Count(string(got), `"runId"`) != 4 ||
			strings.Contains(string(got), "app#") || strings.Contains(string(got), "lib#test") {
			t.Errorf("getRunHistory(lib, build, 2) = %s", got)
		}
		for limit, want := range map[float64]int{0: 1, -3: 1, 2.7: 2, 9999: 500, 1e300: 500} {
			got, isErr := ask("getRunHistory", map[string]any{"limit": limit})
			if isErr || !strings.Contains(string(got), fmt.Sprintf(`"limit":%d,`, want)) {
				t.Errorf("getRunHistory(limit %v) = %.80s, want the applied limit %d", limit, got, want)
			}
		}
	})

	t.Run("explainCacheKey", func(t *testing.T) {
		got, isErr := ask("explainCacheKey", map[string]any{"taskId": "lib#build"})
		k := decode[map[string]any](t, got)
		why := decode[map[string]any](t, cliJSONEnv(t, dir, "why", "lib#build"))
		if isErr || k["found"] != true || k["hash"] != why["hash"] || k["command"] != "sh build.sh" || k["exitCode"] != 0.0 ||
			k["sizeBytes"].(float64) <= 0 || k["outputs"] != 1.0 {
			t.Errorf("explainCacheKey(lib#build) = %s\nvx why: %v", got, why["hash"])
		}
		got, isErr = ask("explainCacheKey", map[string]any{"taskId": "lib#test"})
		if isErr || !strings.Contains(string(got), `"found":false`) {
			t.Errorf("explainCacheKey(lib#test), never cached = %s", got)
		}
	})

	t.Run("whyDidThisRerun", func(t *testing.T) {
		for _, tc := range []struct {
			args map[string]any
			cli  []string
		}{
			{map[string]any{"taskId": "app#build"}, []string{"why", "app#build"}},
			{map[string]any{"taskId": "lib#build"}, []string{"why", "lib#build"}},
			{map[string]any{"taskId": "lib#build", "runId": runs[1]}, []string{"why", "lib#build", "--run", runs[1]}},
			{map[string]any{"taskId": "lib#build", "runId": runs[0][:20]}, []string{"why", "lib#build", "--run", runs[0][:20]}},
		} {
			got, isErr := ask("whyDidThisRerun", tc.args)
			want := cliJSONEnv(t, dir, tc.cli...)
			if isErr || string(compact(t, got)) != string(want) {
				t.Errorf("whyDidThisRerun(%v) = %s\nvx %s = %s", tc.args, got, strings.Join(tc.cli, " "), want)
			}
		}
		got, _ := ask("whyDidThisRerun", map[string]any{"taskId": "app#build"})
		w := decode[struct {
			Changed bool
			Diff    struct {
				Upstream []struct{ TaskID string }
			}
			Roots []struct {
				TaskID string
				Files  struct{ Modified []string }
			}
		}](t, got)
		if !w.Changed || len(w.Diff.Upstream) != 1 || w.Diff.Upstream[0].TaskID != "lib#build" || len(w.Roots) != 1 ||
			w.Roots[0].TaskID != "lib#build" || fmt.Sprint(w.Roots[0].Files.Modified) != "[src/index.ts]" {
			t.Errorf("whyDidThisRerun(app#build) after lib's source changed = %s", got)
		}
	})

	t.Run("getTaskLog", func(t *testing.T) {
		// vx last --log's document, whole: a plain log, a cached log replayed by a hit, a coloured
		// failure log read as plain text, a blocked task's absent log, and a long log cut in the
		// middle — one engine function answers both.
		for _, tc := range []struct {
			args map[string]any
			cli  []string
		}{
			{map[string]any{"taskId": "app#test"}, []string{"last", "--log", "app#test"}},
			{map[string]any{"taskId": "lib#build"}, []string{"last", "--log", "lib#build"}},
			{map[string]any{"taskId": "lib#build", "runId": runs[1][:22]}, []string{"last", "--log", "lib#build", "--run", runs[1][:22]}},
			{map[string]any{"taskId": "lib#test"}, []string{"last", "--log", "lib#test"}},
			{map[string]any{"taskId": "big#test"}, []string{"last", "--log", "big#test"}},
			{map[string]any{"taskId": "big#test", "runId": runs[0]}, []string{"last", "--log", "big#test", "--run", runs[0]}},
		} {
			got, isErr := ask("getTaskLog", tc.args)
			want := cliJSONEnv(t, dir, tc.cli...)
			if tc.args["taskId"] == "big#test" {
				// Over the answer budget: the same document but its output, cut to the budget.
				g, w := decode[map[string]any](t, got), decode[map[string]any](t, want)
				for _, k := range []string{"runId", "taskId", "status", "source", "outputBytes"} {
					if fmt.Sprint(g[k]) != fmt.Sprint(w[k]) {
						t.Errorf("getTaskLog(%v) %s = %v, vx last --log answers %v", tc.args, k, g[k], w[k])
					}
				}
				if len(got) > 40_000 {
					t.Errorf("getTaskLog(%v) is %d characters, over the budget", tc.args, len(got))
				}
				continue
			}
			if isErr || string(compact(t, got)) != string(want) {
				t.Errorf("getTaskLog(%v) = %.500s\nvx %s = %.500s", tc.args, got, strings.Join(tc.cli, " "), want)
			}
		}
		got, _ := ask("getTaskLog", map[string]any{"taskId": "lib#build"})
		if !strings.Contains(string(got), `"omittedBytes":0`) || !strings.Contains(string(got), `"output":"lib built\n"`) {
			t.Errorf("getTaskLog(lib#build) = %s", got)
		}
		got, _ = ask("getTaskLog", map[string]any{"taskId": "lib#test"})
		l := decode[map[string]any](t, got)
		if l["source"] != "failure" || l["status"] != "failed" || !strings.HasPrefix(l["output"].(string), "src/index.ts(1,14): error TS2322: bad token ***\n") {
			t.Errorf("getTaskLog(lib#test) = %s", got)
		}
		got, _ = ask("getTaskLog", map[string]any{"taskId": "app#test"})
		if !strings.Contains(string(got), `"source":null`) || !strings.Contains(string(got), `"outputBytes":0`) {
			t.Errorf("getTaskLog(app#test), blocked = %s", got)
		}
		// A long log is cut as getFailures cuts it, saying how long the whole is.
		got, _ = ask("getTaskLog", map[string]any{"taskId": "big#test"})
		first := decode[map[string]any](t, got)
		checkCut(t, "getTaskLog(big#test)", first, bigLog())
		// Its cursor pages the whole output: the pages, joined, are the log vx last --log --full prints.
		var whole strings.Builder
		for cursor, pages := first["nextCursor"], 0; cursor != nil; pages++ {
			if pages > 100 {
				t.Fatal("getTaskLog's cursors never end")
			}
			got, isErr := ask("getTaskLog", map[string]any{"taskId": "big#test", "cursor": cursor})
			page := decode[map[string]any](t, got)
			if isErr || len(got) > 40_000 || page["offset"] != float64(whole.Len()) {
				t.Fatalf("getTaskLog page %d = %.300s (%d characters)", pages, got, len(got))
			}
			whole.WriteString(page["output"].(string))
			cursor = page["nextCursor"]
		}
		if whole.String() != bigLog() {
			t.Errorf("getTaskLog's pages join to %d bytes, not the whole log of %d", whole.Len(), len(bigLog()))
		}
	})

	t.Run("getFailures", func(t *testing.T) {
		got, isErr := ask("getFailures", map[string]any{})
		f := decode[struct {
			RunID    string
			Failures []map[string]any `json:"tasks"`
		}](t, got)
		if isErr || f.RunID != runs[0] || len(f.Failures) != 2 {
			t.Fatalf("getFailures = %.2000s", got)
		}
		byTask := map[string]map[string]any{}
		for _, x := range f.Failures {
			byTask[x["taskId"].(string)] = x
		}
		lib := byTask["lib#test"]
		wantLoc := []any{map[string]any{"file": filepath.Join(dir, "packages", "lib", "src", "index.ts"), "line": 1.0, "col": 14.0}}
		if lib["exitCode"] != 2.0 || lib["timedOut"] != false || lib["status"] != "failed" || lib["omittedBytes"] != 0.0 ||
			!strings.HasPrefix(lib["output"].(string), "src/index.ts(1,14): error TS2322: bad token ***\n") ||
			fmt.Sprint(lib["locations"]) != fmt.Sprint(wantLoc) {
			t.Errorf("getFailures: lib#test = %v\nwant locations %v", lib, wantLoc)
		}
		big := byTask["big#test"]
		checkCut(t, "getFailures: big#test", big, bigLog())
		// Each failure's output is the task's log as vx last --log (and getTaskLog) answer it, cut
		// to its share of the answer where it is longer.
		for _, id := range []string{"lib#test", "big#test"} {
			log := decode[map[string]any](t, cliJSONEnv(t, dir, "last", "--log", id, "--run", runs[0]))
			keys := []string{"output", "outputBytes", "omittedBytes"}
			if id == "big#test" {
				keys = keys[1:2]
			}
			for _, k := range keys {
				if byTask[id][k] != log[k] {
					t.Errorf("getFailures: %s %s = %.200v, vx last --log answers %.200v", id, k, byTask[id][k], log[k])
				}
			}
		}
		if fmt.Sprint(big["locations"]) != fmt.Sprint([]any{map[string]any{"file": filepath.Join(dir, "packages", "big", "src", "big.ts"), "line": 1.0, "col": 1.0}}) {
			t.Errorf("getFailures: big#test locations = %v", big["locations"])
		}
		// The same run by a prefix; a run that did not fail has no failures.
		again, _ := ask("getFailures", map[string]any{"runId": runs[0][:18]})
		if string(again) != string(got) {
			t.Errorf("getFailures(prefix) differs from getFailures()")
		}
		got, _ = ask("getFailures", map[string]any{"runId": runs[2]})
		if want := fmt.Sprintf(`{"runId":%q,"store":%q,"tasks":[]}`, runs[2], "checkout:"+filepath.Join(dir, ".vx")); string(got) != want {
			t.Errorf("getFailures(ok run) = %s", got)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		ambiguous := commonPrefix(runs)
		for _, tc := range []struct {
			tool string
			args any
			want string
		}{
			{"getCacheStats", map[string]any{"scope": map[string]any{"task": "build"}}, `unknown argument "scope.task"`},
			{"getCacheStats", map[string]any{"scpoe": map[string]any{}}, `unknown argument "scpoe"`},
			{"getCacheStats", map[string]any{"scope": map[string]any{"project": ""}}, `argument "scope.project" must be a non-empty string`},
			{"getCacheStats", map[string]any{"scope": "lib"}, `argument "scope" must be "all" or an object`},
			{"getCacheStats", map[string]any{"scope": map[string]any{}}, `argument "scope" must name a project`},
			{"getRunHistory", map[string]any{"tsk": "build"}, `unknown argument "tsk"`},
			{"getRunHistory", map[string]any{"task": "lib#build"}, `argument "task" must be a task name, not the task id "lib#build"`},
			{"getRunHistory", map[string]any{"task": ""}, `argument "task" must be a non-empty string`},
			{"getRunHistory", map[string]any{"project": 3}, `argument "project" must be a non-empty string`},
			{"getRunHistory", map[string]any{"limit": "ten"}, `argument "limit" must be a finite number`},
			{"getRunHistory", json.RawMessage(`{"limit":1e999}`), `argument "limit" must be a finite number`},
			{"getRunHistory", json.RawMessage(`{"limit":null}`), `argument "limit" must be a finite number`},
			{"explainCacheKey", map[string]any{"tsk": "lib#build"}, `unknown argument "tsk"`},
			{"explainCacheKey", map[string]any{}, `missing argument "taskId"`},
			{"explainCacheKey", map[string]any{"taskId": "#build"}, `argument "taskId" must be a task id project#task, not "#build" (a half is missing)`},
			{"explainCacheKey", map[string]any{"taskId": "lib#"}, `not "lib#" (a half is missing)`},
			{"explainCacheKey", map[string]any{"taskId": ""}, `argument "taskId" must be a non-empty string`},
			{"whyDidThisRerun", map[string]any{"tsk": "lib#build"}, `unknown argument "tsk"`},
			{"whyDidThisRerun", map[string]any{"taskId": "#build"}, `(a half is missing)`},
			{"whyDidThisRerun", map[string]any{"taskId": "lib#build", "runId": ""}, `argument "runId" must be a non-empty string`},
			{"whyDidThisRerun", map[string]any{"taskId": "lib#build", "runId": ambiguous}, fmt.Sprintf(`run id %q is ambiguous: it starts %s`, ambiguous, strings.Join(runs, ", "))},
			{"whyDidThisRerun", map[string]any{"taskId": "lib#build", "runId": "zzzz"}, `no recorded run has id "zzzz"`},
			{"whyDidThisRerun", map[string]any{"taskId": "nope#build"}, `no recorded run computed a key for nope#build`},
			{"getTaskLog", map[string]any{"task": "lib#build"}, `unknown argument "task"`},
			{"getTaskLog", map[string]any{"taskId": "app#"}, `(a half is missing)`},
			{"getTaskLog", map[string]any{"taskId": "lib#build", "runId": ""}, `argument "runId" must be a non-empty string`},
			{"getTaskLog", map[string]any{"taskId": "lib#build", "runId": ambiguous}, `is ambiguous: it starts`},
			{"getTaskLog", map[string]any{"taskId": "lib#test", "runId": runs[1]}, fmt.Sprintf(`run %s did not record lib#test`, runs[1])},
			{"getFailures", map[string]any{"run": runs[0]}, `unknown argument "run"`},
			{"getFailures", map[string]any{"runId": ""}, `argument "runId" must be a non-empty string`},
			{"getFailures", map[string]any{"runId": ambiguous}, `is ambiguous: it starts`},
			{"getFailures", map[string]any{"runId": 7}, `argument "runId" must be a non-empty string`},
		} {
			texts = append(texts, expectRefusal(t, cs, tc.tool, tc.args, tc.want))
		}
	})

	for _, text := range texts {
		if strings.Contains(text, historySecret) {
			t.Errorf("an answer leaks the secret: %.300s", text)
		}
	}
	// A read never prunes history.
	got, _, _ := call(t, cs, "getRunHistory", map[string]any{})
	if n := len(decode[struct {
		Invocations []any `json:"invocations"`
	}](t, got).Invocations); n != 3 {
		t.Errorf("after every read, %d runs remain, want 3", n)
	}
}

// bigLog is what big#test prints, the secret masked.
func bigLog() string {
	var b strings.Builder
	b.WriteString("first line\n")
	for i := 1; i <= 30000; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	b.WriteString("last line ***\nsrc/big.ts:1:1: error: too big\n")
	return b.String()
}

// checkCut checks a cut answer (output, outputBytes, omittedBytes) against the whole log.
func checkCut(t *testing.T, what string, answer map[string]any, whole string) {
	t.Helper()
	out, _ := answer["output"].(string)
	total, _ := answer["outputBytes"].(float64)
	omitted, _ := answer["omittedBytes"].(float64)
	head, rest, ok := strings.Cut(out, "[… vx cut ")
	_, tail, _ := strings.Cut(rest, "\n")
	if !ok || int(total) != len(whole) || omitted <= 0 || len(head)+len(tail)+int(omitted) != len(whole) ||
		!strings.HasPrefix(whole, head) || !strings.HasSuffix(whole, tail) || len(head) > 8<<10 || len(tail) > 56<<10 {
		t.Errorf("%s: output of %d bytes (head %d, tail %d), outputBytes %v, omittedBytes %v; the whole log is %d bytes",
			what, len(out), len(head), len(tail), total, omitted, len(whole))
	}
	if !strings.HasPrefix(out, "first line\n") || !strings.Contains(tail, "last line ***\n") {
		t.Errorf("%s: the head or the tail is missing", what)
	}
}

func commonPrefix(ids []string) string {
	p := ids[0]
	for _, id := range ids[1:] {
		for !strings.HasPrefix(id, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

// With no .vx/ every tool answers from an empty index and creates nothing.
func TestMCPHistoryToolsOnEmptyWorkspace(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, historyWorkspace)
	cs := mcpSession(t, dir, "DEPLOY_TOKEN="+historySecret)
	// Each answer names the store it read: the shared one, or this checkout's .vx/.
	shared := `"store":"shared:` + workspace.StoreDirs(dir, "", "", nil).Shared + `"`
	checkout := `"store":"checkout:` + filepath.Join(dir, ".vx") + `"`
	for _, tc := range []struct {
		tool  string
		args  map[string]any
		want  string
		isErr bool
	}{
		{"getCacheStats", map[string]any{}, `{"entries":0,"entryCount":0,"hitCountLast24h":0,"hitRate":null,"hitRate24h":null,"hits24h":0,"runCountLast24h":0,"runs24h":0,"scope":"all",` + shared + `,"totalBytes":0}`, false},
		{"getCacheStats", map[string]any{"scope": map[string]any{"project": "lib"}}, `"scope":{"project":"lib"}`, false},
		{"getRunHistory", map[string]any{}, `{"history":[],"invocations":[],"limit":50,"omittedTasks":0,"runs":[],` + checkout + `,"totals":{"failing":{},"runs":0,"runsByStatus":{},"tasks":0}}`, false},
		{"explainCacheKey", map[string]any{"taskId": "lib#build"}, `"found":false`, false},
		{"whyDidThisRerun", map[string]any{"taskId": "lib#build"}, `no recorded run computed a key for lib#build`, true},
		{"whyDidThisRerun", map[string]any{"taskId": "lib#build", "runId": "01"}, `no recorded run has id "01"`, true},
		{"getTaskLog", map[string]any{"taskId": "lib#build"}, `no recorded run has lib#build`, true},
		{"getFailures", map[string]any{}, `{"runId":null,` + checkout + `,"tasks":[]}`, false},
		{"getFailures", map[string]any{"runId": "01"}, `no recorded run has id "01"`, true},
	} {
		got, text, isErr := call(t, cs, tc.tool, tc.args)
		if isErr {
			got = json.RawMessage(text)
		} else {
			got = compact(t, got)
		}
		if isErr != tc.isErr || !strings.Contains(string(got), tc.want) {
			t.Errorf("%s(%v) = %s (isError %v), want %s", tc.tool, tc.args, got, isErr, tc.want)
		}
	}
	if want := cliJSON(t, dir, "cache", "stats"); true {
		got, _, _ := call(t, cs, "getCacheStats", map[string]any{})
		if string(compact(t, got)) != string(want) {
			t.Errorf("getCacheStats = %s, vx cache stats = %s", got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".vx")); !os.IsNotExist(err) {
		t.Errorf("the history tools created .vx: %v", err)
	}

	// Each tool tells an agent when to call it, describes every argument, declares its answer,
	// and is read-only.
	listed, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, tool := range listed.Tools {
		switch tool.Name {
		case "getCacheStats", "getRunHistory", "explainCacheKey", "whyDidThisRerun", "getTaskLog", "getFailures":
		default:
			continue
		}
		found++
		in := decode[struct {
			Properties           map[string]map[string]any
			AdditionalProperties *bool
		}](t, mustJSON(t, tool.InputSchema))
		for name, p := range in.Properties {
			if d, _ := p["description"].(string); d == "" {
				t.Errorf("%s: argument %s has no description", tool.Name, name)
			}
		}
		out := decode[struct {
			Properties map[string]any
			Required   []string
		}](t, mustJSON(t, tool.OutputSchema))
		if tool.Title == "" || len(tool.Description) < 200 || tool.Annotations == nil || !tool.Annotations.ReadOnlyHint ||
			in.AdditionalProperties == nil || *in.AdditionalProperties || len(out.Properties) == 0 ||
			len(out.Required) == 0 && tool.Name != "getRunHistory" { // getRunHistory {runId} answers only its run
			t.Errorf("%s is not described for an agent: title %q, %d-byte description, annotations %+v, schemas %s %s",
				tool.Name, tool.Title, len(tool.Description), tool.Annotations, mustJSON(t, tool.InputSchema), mustJSON(t, tool.OutputSchema))
		}
	}
	if found != 6 {
		t.Errorf("%d of the six history tools are listed", found)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// An index of another version is refused by name and left as it is; a broken config hides no history.
func TestMCPHistoryToolsStateAndConfigErrors(t *testing.T) {
	t.Parallel()
	t.Run("other index version", func(t *testing.T) {
		t.Parallel()
		dir := writeWorkspace(t, historyWorkspace)
		index := filepath.Join(dir, ".vx", store.IndexFile)
		if err := os.MkdirAll(filepath.Dir(index), 0o755); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite", index)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`, `INSERT INTO meta VALUES ('schema', '999')`,
			`CREATE TABLE runs (id TEXT PRIMARY KEY)`, `INSERT INTO runs VALUES ('old-run')`} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		before, _ := os.ReadFile(index)
		cs := mcpSession(t, dir)
		want := index + " has index schema version 999, this vx reads version"
		for tool, args := range map[string]map[string]any{
			"getCacheStats": {}, "getRunHistory": {}, "explainCacheKey": {"taskId": "lib#build"},
			"whyDidThisRerun": {"taskId": "lib#build"}, "getTaskLog": {"taskId": "lib#build"}, "getFailures": {},
		} {
			_, text, isErr := call(t, cs, tool, args)
			if !isErr || !strings.Contains(text, want) || strings.Contains(text, "\n") {
				t.Errorf("%s on a version-999 index = %q (isError %v), want it refused by name", tool, text, isErr)
			}
		}
		if after, _ := os.ReadFile(index); !bytes.Equal(before, after) {
			t.Errorf("a read changed the index of another version")
		}
	})

	t.Run("broken config", func(t *testing.T) {
		t.Parallel()
		dir, runs := recorded(t)
		cs := mcpSession(t, dir, "DEPLOY_TOKEN="+historySecret)
		healthy, _, _ := call(t, cs, "getFailures", map[string]any{})
		ws := filepath.Join(dir, "vx.workspace.ts")
		src, _ := os.ReadFile(ws)
		if err := os.WriteFile(ws, append(src, []byte("\nexport const broken = (\n")...), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, text, isErr := call(t, cs, "listTasks", map[string]any{}); !isErr {
			t.Fatalf("the config still loads: %s", text)
		}
		for _, tc := range []struct {
			tool string
			args map[string]any
			want string
		}{
			{"getCacheStats", map[string]any{}, `"runs24h":11`},
			{"getRunHistory", map[string]any{"limit": 1}, runs[2]},
			{"explainCacheKey", map[string]any{"taskId": "lib#build"}, `"found":true`},
			{"whyDidThisRerun", map[string]any{"taskId": "app#build"}, `"changed":true`},
			{"getTaskLog", map[string]any{"taskId": "lib#test"}, `bad token ***`},
		} {
			got, text, isErr := call(t, cs, tc.tool, tc.args)
			if isErr || !strings.Contains(string(got), tc.want) || strings.Contains(text, historySecret) {
				t.Errorf("%s with a broken config = %.300s (isError %v), want %s", tc.tool, text, isErr, tc.want)
			}
		}
		// Without the config the project folders are unknown: locations resolve against the root,
		// so lib's src/index.ts is no longer found, and nothing else changes.
		broken, _, isErr := call(t, cs, "getFailures", map[string]any{})
		strip := regexp.MustCompile(`"locations":\[[^\]]*\]`)
		if isErr || strip.ReplaceAllString(string(broken), "") != strip.ReplaceAllString(string(healthy), "") {
			t.Errorf("getFailures with a broken config = %.300s\nwith a good one = %.300s", broken, healthy)
		}
	})
}

// On a large workspace getRunHistory stays readable: a big run lists only the tasks that did not
// pass, and the statistics keep the failing and the slowest tasks.
func TestMCPHistoryToolsBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const projects = 60 // 180 tasks a full run
	if err := writeBenchHistory(context.Background(), dir, projects, 40); err != nil {
		t.Fatal(err)
	}
	cs := mcpSession(t, dir)
	// limit: the runs with their rows (with no argument the first answer is a summary).
	got, text, isErr := call(t, cs, "getRunHistory", map[string]any{"limit": 20})
	if isErr || len(text) > 100_000 {
		t.Fatalf("getRunHistory: isError %v, %d bytes: %.300s", isErr, len(text), text)
	}
	type task struct {
		TaskID      string
		Status      string
		P50Ms       *int64
		FailureMode *string
	}
	h := decode[struct {
		Limit int
		Runs  []struct {
			Counts       map[string]int
			Tasks        []task
			OmittedTasks int
		} `json:"invocations"`
		Tasks        []task `json:"history"`
		OmittedTasks int
	}](t, got)
	if h.Limit != 20 || len(h.Runs) != 20 {
		t.Fatalf("getRunHistory: limit %d, %d runs", h.Limit, len(h.Runs))
	}
	full := 0
	for i, r := range h.Runs {
		total := 0
		for _, n := range r.Counts {
			total += n
		}
		if total != len(r.Tasks)+r.OmittedTasks {
			t.Errorf("run %d: counts %v add up to %d, but %d tasks are listed and %d omitted", i, r.Counts, total, len(r.Tasks), r.OmittedTasks)
		}
		if total <= 25 && r.OmittedTasks != 0 {
			t.Errorf("run %d of %d tasks omits %d", i, total, r.OmittedTasks)
		}
		if total == 3*projects {
			full++
			for _, tk := range r.Tasks {
				if tk.Status == "hit" || tk.Status == "miss" {
					t.Errorf("run %d of %d tasks lists a task that passed: %+v", i, total, tk)
				}
			}
			if r.Counts["failed"] == 0 || len(r.Tasks) != r.Counts["failed"] {
				t.Errorf("run %d: counts %v, %d tasks listed", i, r.Counts, len(r.Tasks))
			}
		}
	}
	if full != 2 {
		t.Errorf("%d full runs in the last 20, want 2", full)
	}
	// Each statistic carries the original's names beside vx's, and the executions' rows share the
	// budget: some 50 statistics fit beside the runs, the most recently run task first.
	if len(h.Tasks) < 40 || h.OmittedTasks < 3*projects-100 {
		t.Errorf("%d task statistics, %d omitted", len(h.Tasks), h.OmittedTasks)
	}
	// Narrowed to one project, every run lists every task of it.
	got, _, _ = call(t, cs, "getRunHistory", map[string]any{"project": "p7", "limit": 500})
	if regexp.MustCompile(`"omittedTasks":[1-9]`).Match(got) || !strings.Contains(string(got), `"taskId":"p7#build"`) || strings.Contains(string(got), "p8#") {
		t.Errorf("getRunHistory(p7) = %.500s", got)
	}
}

// Benchmarks: each history tool on a generated workspace of 500 projects (build, test and lint
// each) with 1,000 recorded runs over 30 days — every tenth a full run of all 1,500 tasks, the
// others a few tasks of one project — recorded through the store API (about 160,000 executions,
// 15,000 cache entries and manifests).
//
//	go test ./cmd/vx/ -run '^$' -bench 'MCPHistory' -benchtime 200x
const (
	benchProjects = 500
	benchRuns     = 1000
)

// benchCall is one measured tool call.
type benchCall struct {
	name, tool string
	args       map[string]any
}

var benchCalls = []benchCall{
	{"getCacheStats", "getCacheStats", map[string]any{}},
	{"getCacheStats/project", "getCacheStats", map[string]any{"scope": map[string]any{"project": "p250"}}},
	{"getRunHistory", "getRunHistory", map[string]any{}},
	{"getRunHistory/project", "getRunHistory", map[string]any{"project": "p250"}},
	{"getRunHistory/task", "getRunHistory", map[string]any{"task": "test"}},
	{"getRunHistory/limit500", "getRunHistory", map[string]any{"limit": 500}},
	{"explainCacheKey", "explainCacheKey", map[string]any{"taskId": "p250#build"}},
	{"whyDidThisRerun", "whyDidThisRerun", map[string]any{"taskId": "p250#build"}},
	{"getTaskLog", "getTaskLog", map[string]any{"taskId": "p250#test"}},
	{"getFailures", "getFailures", map[string]any{}},
}

// BenchmarkMCPHistoryTools measures each tool twice: "handler" calls the tool's handler in process,
// as the server does, and encodes its answer (the tool's own latency); "stdio" calls it through
// `vx mcp` and the Go SDK client (the latency an agent sees, transport included).
func BenchmarkMCPHistoryTools(b *testing.B) {
	benchmarkTools(b, benchCalls)
}

// benchmarkTools writes the generated 500-project, 1,000-run workspace and measures each call, in
// process ("handler") and through `vx mcp` ("stdio").
func benchmarkTools(b *testing.B, calls []benchCall) {
	dir := b.TempDir()
	ctx := context.Background()
	if err := writeBenchHistory(ctx, dir, benchProjects, benchRuns); err != nil {
		b.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "DEPLOY_TOKEN" {
			return historySecret
		}
		return os.Getenv(k)
	}
	sess := session.Open(session.Options{
		Loader: workspace.NewLoader(workspace.Options{Dir: dir, Getenv: getenv, Console: io.Discard, Version: version}),
		Exe:    os.Args[0], Environ: append(os.Environ(), "DEPLOY_TOKEN="+historySecret),
	})
	defer sess.Close()
	deps := &tools.Deps{Session: sess, Stderr: io.Discard, Version: version}
	reg := tools.All(deps)
	for _, c := range calls {
		t, ok := reg.Lookup(ctx, c.tool)
		if !ok {
			b.Fatalf("no tool %s", c.tool)
		}
		args, _ := json.Marshal(c.args)
		callOnce := func() []byte {
			out, err := t.Call(ctx, &tool.Call{Args: args, Progress: func(float64, float64, string) {}})
			if err != nil {
				b.Fatalf("%s(%s): %v", c.tool, args, err)
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
	cmd.Env = append(cmd.Env, "DEPLOY_TOKEN="+historySecret)
	cmd.Stderr = io.Discard
	client := mcp.NewClient(&mcp.Implementation{Name: "vx-bench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	for _, c := range calls {
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

// writeBenchHistory writes a generated workspace of projects into dir and records runs through the
// store API: every tenth a full run of every task, the others one project's test and lint after
// the builds they need, over the last 30 days. A test fails now and then with one of two logs (one
// of 200 KB); each project's inputs change every 100 runs.
func writeBenchHistory(ctx context.Context, dir string, projects, runs int) error {
	files := map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
import { mcp } from '@vzn/vx-mcp'
export default defineWorkspace({
  projects: ['packages/*'],
  plugins: [mcp()],
  tasks: {
    build: { command: 'sh build.sh', dependsOn: ['^build'], inputs: ['src/**'], outputs: ['dist/**'] },
    test: { command: 'sh test.sh', dependsOn: ['build'], exec: { env: { TOKEN: { secret: 'DEPLOY_TOKEN' } } } },
    lint: { command: 'sh lint.sh' },
  },
})
`,
	}
	for p := range projects {
		deps := ""
		if p > 0 {
			deps = fmt.Sprintf(`, "dependencies": {"p%d": "*"}`, (p-1)/2)
		}
		files[fmt.Sprintf("packages/p%d/package.json", p)] = fmt.Sprintf(`{"name": "p%d"%s}`, p, deps)
		files[fmt.Sprintf("packages/p%d/src/index.ts", p)] = "export const x = 1\n"
	}
	for name, text := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return err
		}
	}

	st, err := store.Open(ctx, filepath.Join(dir, ".vx"), store.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	okLog, err := st.CAS().Put([]byte("ok\n"))
	if err != nil {
		return err
	}
	var failLogs []string // a short failure log, and one of 200 KB that getFailures cuts
	for _, text := range []string{
		"src/index.ts:3:7 - error TS2322: Type 'string' is not assignable to type 'number'.\n    at check (src/index.ts:9:1)\n",
		strings.Repeat("noise line of a chatty test runner\n", 6000) + "src/index.ts:1:1: error: failed\n",
	} {
		h, err := st.CAS().Put([]byte(text))
		if err != nil {
			return err
		}
		failLogs = append(failLogs, h)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Now()
	first := now.Add(-30 * 24 * time.Hour)
	haveKey := map[string]bool{}
	for i := range runs {
		started := first.Add(time.Duration(i) * 30 * 24 * time.Hour / time.Duration(runs))
		runID := store.NewRunID(started)
		var tasks []string // project#task, in the order they finish
		if i%10 == 0 {
			for p := range projects {
				for _, name := range []string{"build", "lint", "test"} {
					tasks = append(tasks, fmt.Sprintf("p%d#%s", p, name))
				}
			}
		} else {
			p := rng.IntN(projects)
			for q := p; ; q = (q - 1) / 2 {
				tasks = append([]string{fmt.Sprintf("p%d#build", q)}, tasks...)
				if q == 0 {
					break
				}
			}
			tasks = append(tasks, fmt.Sprintf("p%d#test", p), fmt.Sprintf("p%d#lint", p))
		}
		if err := st.BeginRun(ctx, store.Run{ID: runID, Started: started, Host: "bench", Args: []string{"run"},
			Requested: []string{"test"}, TaskCount: len(tasks), Concurrency: 8}); err != nil {
			return err
		}
		batch := store.Batch{TouchedAt: started}
		failed := false
		at := started
		for ord, id := range tasks {
			project, name, _ := strings.Cut(id, "#")
			var p int
			fmt.Sscanf(project, "p%d", &p)
			gen := (i + p*7) / 100 // each project's inputs change every 100 runs, staggered
			manifest, _ := json.Marshal(map[string]any{"version": "1", "taskId": id, "command": "sh " + name + ".sh",
				"env": map[string]string{}, "execEnv": map[string]string{}, "outputs": []string{"dist/**"},
				"files": map[string]string{"src/index.ts": fmt.Sprintf("%064d", gen)}, "deps": map[string]string{}})
			sum := sha256.Sum256(manifest)
			hash := hex.EncodeToString(sum[:])
			d := time.Duration(50+rng.IntN(3000)) * time.Millisecond
			e := store.Execution{RunID: runID, TaskID: id, Project: project, Task: name, Ord: ord, Started: at,
				Duration: d, UserCPU: d / 2, SysCPU: d / 10, PeakRSSBytes: int64(30+rng.IntN(400)) << 20, Hash: hash}
			at = at.Add(d / 8)
			code := 0
			switch {
			case name == "test" && (p*31+i)%53 == 0:
				code = 1
				e.Status, e.LogSource, e.LogBlob = "failed", "failure", failLogs[i%2]
				failed = true
			case haveKey[hash]:
				e.Status, e.CacheSource, e.Saved, e.LogSource, e.LogBlob = "hit", "local", d, "cache", okLog
				e.Duration = 5 * time.Millisecond
				batch.Touched = append(batch.Touched, hash)
			default:
				e.Status, e.LogSource, e.LogBlob = "miss", "cache", okLog
				haveKey[hash] = true
				batch.Manifests = append(batch.Manifests, store.ManifestRow{Hash: hash, TaskID: id, Manifest: manifest})
				if err := st.PutEntry(ctx, store.Entry{Hash: hash, TaskID: id, Project: project, Command: "sh " + name + ".sh",
					LogBlob: okLog, Size: 4096, Duration: d, Created: at, LastUsed: at}); err != nil {
					return err
				}
			}
			e.ExitCode = &code
			batch.Executions = append(batch.Executions, e)
		}
		if err := st.Record(ctx, batch); err != nil {
			return err
		}
		status, exit := store.RunOK, 0
		if failed {
			status, exit = store.RunFailed, 1
		}
		if err := st.FinishRun(ctx, runID, status, exit, at); err != nil {
			return err
		}
	}
	return nil
}
