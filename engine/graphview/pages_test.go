package graphview_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/vzn/vx/engine/graphview"
	"github.com/vzn/vx/engine/store"
)

// writeGraphPage writes g's page to a file of the test and answers its path.
func writeGraphPage(t testing.TB, g *graphview.Graph) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "graph.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := g.WriteHTML(f); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeRunPage(t testing.TB, r *graphview.Run) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := r.WriteHTML(f); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkGraphPage tries g's page as a person would: a node per task of the selection, the critical
// path marked, a click on a node shows its command, a search finds a task and shows it.
func checkGraphPage(t *testing.T, p *page, g *graphview.Graph, click, find string) {
	t.Helper()
	if n := eval[int](t, p, `document.querySelectorAll('#canvas g.node').length`); n != len(g.Tasks) {
		t.Errorf("the page draws %d nodes, the selection has %d tasks", n, len(g.Tasks))
	}
	critical := eval[[]string](t, p, `[...document.querySelectorAll('#canvas g.node.critical')].map(e => e.dataset.id)`)
	slices.Sort(critical)
	want := slices.Sorted(slices.Values(g.CriticalPath))
	if len(want) == 0 || !slices.Equal(critical, want) {
		t.Errorf("the page marks %v as the critical path, the plan says %v", critical, want)
	}
	if n := eval[int](t, p, `document.querySelectorAll('#canvas path.edge').length`); n != len(g.Edges) {
		t.Errorf("the page draws %d edges, the graph has %d", n, len(g.Edges))
	}
	var node graphview.Node
	for _, n := range g.Tasks {
		if n.ID == click {
			node = n
		}
	}
	sel := `#canvas g.node[data-id="` + click + `"] rect.box`
	p.do(t, "click "+click, chromedp.Click(chromedp.CSS(sel)), chromedp.WaitVisible(chromedp.CSS("#details h2")))
	if got := eval[string](t, p, `document.querySelector('#details h2').textContent`); got != click {
		t.Errorf("a click on %s shows the details of %q", click, got)
	}
	if text := eval[string](t, p, `document.querySelector('#details').textContent`); !strings.Contains(text, node.Command) {
		t.Errorf("the details of %s do not show its command %q: %s", click, node.Command, text)
	}
	p.do(t, "search "+find, chromedp.Click(chromedp.CSS("#search")), chromedp.SendKeys(chromedp.CSS("#search"), find+"\r"))
	if got := eval[string](t, p, `document.querySelector('#details h2').textContent`); got != find {
		t.Errorf("searching %s and pressing Enter shows %q", find, got)
	}
	if got := eval[[]string](t, p, `[...document.querySelectorAll('#canvas g.node.match')].map(e => e.dataset.id)`); !slices.Contains(got, find) {
		t.Errorf("searching %s marks %v", find, got)
	}
	if got := eval[string](t, p, `document.getElementById('matches').textContent`); !strings.HasSuffix(got, "match") &&
		!strings.HasSuffix(got, "matches") {
		t.Errorf("the search says %q", got)
	}
}

// The graph page of a small workspace, after a run and an edit, in a real browser offline.
func TestGraphPageInBrowser(t *testing.T) {
	ctx := browser(t)
	dir := smallWorkspace(t)
	run(t, dir, request())
	writeFile(t, filepath.Join(dir, "packages", "lib", "src", "index.js"), "export const name = 'lib, changed'\n")
	g := build(t, dir, request())
	p, _ := open(t, ctx, writeGraphPage(t, g))
	checkGraphPage(t, p, g, "api#deploy", "web#test")

	// A predicted miss says why: the file that moved since the last run.
	p.do(t, "clear the search, fit and click lib#build", chromedp.SendKeys(chromedp.CSS("#search"), "\x1b"),
		chromedp.Click(chromedp.CSS("#fit")), chromedp.Click(chromedp.CSS(`#canvas g.node[data-id="lib#build"] rect.box`)))
	why := eval[string](t, p, `document.querySelector('#details .why').textContent`)
	if !strings.Contains(why, "input files changed") || !strings.Contains(why, "src/index.js") {
		t.Errorf("lib#build's details say %q, not why it would miss", why)
	}
	p.screenshot(t, "graph-small")
	// The tag filter leaves only api's tasks.
	p.do(t, "filter by tag", chromedp.SetValue(chromedp.CSS("#tag"), "backend"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('tag').dispatchEvent(new Event('change'))`))
	shown := eval[[]string](t, p, `[...document.querySelectorAll('#canvas g.node:not(.filtered)')].map(e => e.dataset.id).sort()`)
	if want := []string{"api#build", "api#deploy", "api#lint", "api#test"}; !slices.Equal(shown, want) {
		t.Errorf("tag backend shows %v, want %v", shown, want)
	}
	// The project box, typed into, leaves only that project's tasks.
	p.do(t, "filter by project", chromedp.SetValue(chromedp.CSS("#tag"), ""),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('tag').dispatchEvent(new Event('change'))`),
		chromedp.SendKeys(chromedp.CSS("#project"), "web"))
	shown = eval[[]string](t, p, `[...document.querySelectorAll('#canvas g.node:not(.filtered)')].map(e => e.dataset.id).sort()`)
	if want := []string{"web#build", "web#lint", "web#test"}; !slices.Equal(shown, want) {
		t.Errorf("project web shows %v, want %v", shown, want)
	}
	p.check(t)
}

// The run page of a run where api#test failed: a bar per task on its lane, the critical path
// marked, a click on the failure shows its command and its log.
func TestRunPageInBrowser(t *testing.T) {
	ctx := browser(t)
	dir := smallWorkspace(t)
	sum := run(t, dir, request())
	r := timelineOf(t, dir, sum.RunID)
	p, _ := open(t, ctx, writeRunPage(t, r))
	checkRunPage(t, p, r, "api#test", "web#lint")
	p.do(t, "clear the search, fit and click the failure", chromedp.SendKeys(chromedp.CSS("#search"), "\x1b"),
		chromedp.Click(chromedp.CSS("#fit")), chromedp.Click(chromedp.CSS(`#canvas rect.bar[data-id="api#test"]`)))
	log := eval[string](t, p, `document.querySelector('#details pre.log').textContent`)
	if !strings.Contains(log, "expected 1, got 2 <at> api/src/index.js:1") {
		t.Errorf("the failure's details show the log %q", log)
	}
	p.screenshot(t, "run-small")
	p.check(t)
}

func timelineOf(t testing.TB, dir, runID string) *graphview.Run {
	t.Helper()
	st, err := store.OpenReadOnly(context.Background(), filepath.Join(dir, ".vx"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := graphview.RunTimeline(context.Background(), st, runID, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func checkRunPage(t *testing.T, p *page, r *graphview.Run, click, find string) {
	t.Helper()
	if n := eval[int](t, p, `document.querySelectorAll('#canvas rect.bar').length`); n != len(r.Tasks) {
		t.Errorf("the page draws %d bars, the run has %d tasks", n, len(r.Tasks))
	}
	critical := eval[[]string](t, p, `[...document.querySelectorAll('#canvas rect.bar.critical')].map(e => e.dataset.id)`)
	slices.Sort(critical)
	if want := slices.Sorted(slices.Values(r.CriticalPath)); len(want) == 0 || !slices.Equal(critical, want) {
		t.Errorf("the page marks %v as the critical path, the run's is %v", critical, want)
	}
	var bar graphview.Bar
	for _, b := range r.Tasks {
		if b.TaskID == click {
			bar = b
		}
	}
	// The failure is linked from the summary line: following it shows the task.
	p.do(t, "follow the failure "+click, chromedp.Click(chromedp.CSS(`#summary a`)), chromedp.WaitVisible(chromedp.CSS("#details h2")))
	if got := eval[string](t, p, `document.querySelector('#details h2').textContent`); got != click {
		t.Errorf("the failure's link shows %q, want %s", got, click)
	}
	p.do(t, "click "+click, chromedp.Click(chromedp.CSS(`#canvas rect.bar[data-id="`+click+`"]`)))
	if text := eval[string](t, p, `document.querySelector('#details').textContent`); bar.Command == "" || !strings.Contains(text, bar.Command) {
		t.Errorf("the details of %s do not show its command %q: %s", click, bar.Command, text)
	}
	p.do(t, "search "+find, chromedp.Click(chromedp.CSS("#search")), chromedp.SendKeys(chromedp.CSS("#search"), find+"\r"))
	if got := eval[string](t, p, `document.querySelector('#details h2').textContent`); got != find {
		t.Errorf("searching %s and pressing Enter shows %q", find, got)
	}
}
