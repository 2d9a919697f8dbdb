package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/engine/session"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/workspace"
)

// busyHistory is a workspace whose index holds the worst a summary meets at n projects: runs runs
// of the projects' tests, in each of which a tenth of the tests failed, a different tenth each
// run. The first two runs run every test, so that every test both passed and failed with its one
// key (n flaky tasks); the later ones record only their failures (fewer rows to write under -race).
func busyHistory(t *testing.T, n, runs int) *Deps {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "vx.workspace.ts"), []byte("export default { projects: [] }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, filepath.Join(dir, ".vx"), store.Options{SharedDir: sharedDirOf(dir)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.Now().Add(-time.Hour)
	for r := range runs {
		at := start.Add(time.Duration(r) * time.Minute)
		id := store.NewRunID(at)
		if err := st.BeginRun(ctx, store.Run{ID: id, Started: at, TaskCount: n}); err != nil {
			t.Fatal(err)
		}
		var b store.Batch
		for i := range n {
			if r >= 2 && i%10 != r%10 {
				continue
			}
			project := fmt.Sprintf("p%05d", i)
			e := store.Execution{RunID: id, TaskID: project + "#test", Project: project, Task: "test", Ord: i,
				Status: store.StatusMiss, Started: at, Duration: time.Duration(100+i) * time.Millisecond, Hash: "key-" + project}
			if i%10 == r%10 {
				code := 1
				e.Status, e.ExitCode = store.StatusFailed, &code
			}
			b.Executions = append(b.Executions, e)
		}
		if err := st.Record(ctx, b); err != nil {
			t.Fatal(err)
		}
		if err := st.FinishRun(ctx, id, store.RunFailed, 1, at.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	d := testDeps(t, session.Options{Loader: workspace.NewLoader(workspace.Options{Dir: dir})})
	return d
}

// followPages calls a tool and follows its cursors to the end; it answers the pages' texts.
func followPages(t *testing.T, tl tool.Tool, args map[string]any) []string {
	t.Helper()
	var pages []string
	for len(pages) < 1000 {
		raw, _ := json.Marshal(args)
		out, err := tl.Call(context.Background(), &tool.Call{Args: raw})
		if err != nil {
			t.Fatalf("%s %s: %v", tl.Name, raw, err)
		}
		pages = append(pages, string(out))
		var page struct {
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(out, &page); err != nil {
			t.Fatal(err)
		}
		if page.NextCursor == "" {
			return pages
		}
		args["cursor"] = page.NextCursor
	}
	t.Fatalf("%s: the cursors never end", tl.Name)
	return nil
}

// getRunHistory's first answer at 1,000 projects, 20 runs of 100 failures each and 1,000 failing
// tasks (busyHistory), is a summary under 8,000 characters: the totals first, the newest runs each with its
// first failures, the failing tasks; the cursor reaches every run and every listed statistic, a
// run id its every task, a project its whole history.
func TestRunHistoryFirstAnswerIsASummary(t *testing.T) {
	const n, runs = 1000, 20
	d := busyHistory(t, n, runs)
	gh := d.getRunHistory()
	pages := followPages(t, gh, map[string]any{})
	first := pages[0]
	if len(first) > summaryChars || !strings.HasPrefix(first, `{"limit":50,"totals":{"runs":20,"runsByStatus":{"failed":20},"tasks":1000,"failing":{"flaky":1000}},"invocations":[{"runId":`) {
		t.Errorf("the first answer is %d characters: %.400s", len(first), first)
	}
	runIDs, stats, execs := map[string]bool{}, map[string]bool{}, 0
	for _, p := range pages {
		var page struct {
			Runs []struct {
				RunID        string        `json:"runId"`
				Tasks        []HistoryTask `json:"tasks"`
				OmittedTasks int           `json:"omittedTasks"`
			} `json:"invocations"`
			Executions []HistoryTask `json:"runs"`
			Tasks      []struct {
				TaskID string `json:"taskId"`
			} `json:"history"`
		}
		if err := json.Unmarshal([]byte(p), &page); err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Runs {
			if runIDs[r.RunID] {
				t.Errorf("run %s on two pages", r.RunID)
			}
			runIDs[r.RunID] = true
			if len(r.Tasks) != summaryRunRows || r.OmittedTasks < n/10-summaryRunRows || r.Tasks[0].Status != store.StatusFailed {
				t.Errorf("a summary's run lists %d tasks (first %+v), omits %d", len(r.Tasks), r.Tasks[0], r.OmittedTasks)
			}
		}
		for _, s := range page.Tasks {
			stats[s.TaskID] = true
		}
		execs += len(page.Executions)
	}
	if len(runIDs) != runs || len(stats) != 100 || execs != 50 {
		t.Errorf("the cursors reached %d runs, %d statistics and %d executions, want %d, 100 and 50", len(runIDs), len(stats), execs, runs)
	}
	// A run's every task, through its run id; one project's whole history.
	var run struct {
		Run struct {
			Totals struct {
				Failed int `json:"failed"`
			} `json:"totals"`
		} `json:"run"`
	}
	for id := range runIDs {
		if err := json.Unmarshal([]byte(followPages(t, gh, map[string]any{"runId": id})[0]), &run); err != nil || run.Run.Totals.Failed != n/10 {
			t.Errorf("getRunHistory {runId: %s}: %d failed, %v", id, run.Run.Totals.Failed, err)
		}
		break
	}
	// p00007#test ran in the first two runs and in those whose failing tenth was its own; its rows
	// in those runs, its executions' rows and its statistics name it.
	project := followPages(t, gh, map[string]any{"project": "p00007"})
	if len(project) != 1 || strings.Count(project[0], `"taskId":"p00007#test"`) != 2*(2+runs/10)+1 {
		t.Errorf("getRunHistory {project: p00007}: %d pages: %.400s", len(project), project[0])
	}
}

// HistoryTask is the part of a run's task row the tests read.
type HistoryTask struct {
	TaskID string       `json:"taskId"`
	Status store.Status `json:"status"`
}

// getWorkspaceInfo's first answer with 1,000 flaky tasks begins with what needs attention and stays
// under 8,000 characters; the cursor lists every flaky task once.
func TestWorkspaceInfoFirstAnswerIsASummary(t *testing.T) {
	const n = 1000
	d := busyHistory(t, n, 10)
	pages := followPages(t, d.getWorkspaceInfo(), map[string]any{})
	first := pages[0]
	if len(first) > summaryChars || !strings.HasPrefix(first, `{"attention":["1000 flaky task(s) (one cache key both passed and failed): p00000#test, p00001#test, p00002#test and 997 more"],`) ||
		!strings.Contains(first, `"flakyReport":{"known":true,"value":{"count":1000,"tasks":["p00000#test",`) {
		t.Errorf("the first answer is %d characters: %.600s", len(first), first)
	}
	seen, seenRows := map[string]bool{}, map[string]bool{}
	for _, p := range pages {
		var page struct {
			FlakyTasks struct {
				Value struct {
					Tasks []string `json:"tasks"`
				} `json:"value"`
			} `json:"flakyReport"`
			Rows []store.FlakyCount `json:"flakyTasks"`
		}
		if err := json.Unmarshal([]byte(p), &page); err != nil {
			t.Fatal(err)
		}
		for _, id := range page.FlakyTasks.Value.Tasks {
			if seen[id] {
				t.Errorf("%s on two pages", id)
			}
			seen[id] = true
		}
		for _, r := range page.Rows {
			if seenRows[r.TaskID] {
				t.Errorf("%s's row on two pages", r.TaskID)
			}
			seenRows[r.TaskID] = true
		}
	}
	if len(seen) != n || len(seenRows) != n {
		t.Errorf("the cursors listed %d flaky tasks and %d rows, want %d", len(seen), len(seenRows), n)
	}
}

// getCacheStats answers totals only, whatever the workspace's size: a fixed handful of numbers.
func TestCacheStatsIsTotals(t *testing.T) {
	d := busyHistory(t, 1000, 2)
	js, err := d.getCacheStats().Call(context.Background(), &tool.Call{Args: json.RawMessage(`{}`)})
	// The numbers, then the shared store the answer is about.
	if err != nil || len(js) > 300 || !strings.HasPrefix(string(js), `{"scope":"all","entryCount":0,"totalBytes":0,"runCountLast24h":2000,"hitCountLast24h":0,"hitRate24h":0,"entries":0,"runs24h":2000,"hits24h":0,"hitRate":0,"store":"shared:`) {
		t.Errorf("getCacheStats {}: %s, %v", js, err)
	}
}
