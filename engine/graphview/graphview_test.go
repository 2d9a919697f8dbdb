package graphview_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/graphview"
	"github.com/vzn/vx/engine/store"
)

// The graph of a selection after a run and an edit: every task of the selection, its prediction
// as vx run --dry makes it, its statistics, why a predicted miss would miss (the file that moved),
// the edges by kind, the critical path marked.
func TestBuildPredictsAndExplains(t *testing.T) {
	dir := smallWorkspace(t)
	sum := run(t, dir, request())
	if sum.OK || len(sum.Tasks) != 10 {
		t.Fatalf("the first run: ok %v with %d tasks; want api#test failing among 10", sum.OK, len(sum.Tasks))
	}
	writeFile(t, filepath.Join(dir, "packages", "lib", "src", "index.js"), "export const name = 'lib, changed'\n")
	g := build(t, dir, request())
	if len(g.Tasks) != 10 {
		t.Fatalf("%d nodes, want the selection's 10 tasks", len(g.Tasks))
	}
	nodes := map[string]graphview.Node{}
	for _, n := range g.Tasks {
		nodes[n.ID] = n
	}
	lib := nodes["lib#build"]
	if lib.Cache != store.StatusMiss || lib.Why == nil || !slices.Equal(lib.Why.Diff.Files.Modified, []string{"src/index.js"}) ||
		lib.Why.Reason != "input files changed" || lib.Why.PreviousRunID == nil || *lib.Why.PreviousRunID != sum.RunID {
		t.Errorf("lib#build: %s, why %+v; want a miss because src/index.js was modified since run %s", lib.Cache, lib.Why, sum.RunID)
	}
	if web := nodes["web#build"]; web.Why == nil || len(web.Why.Diff.Upstream) != 1 || len(web.Why.Roots) != 1 ||
		web.Why.Roots[0].TaskID != "lib#build" || !slices.Equal(web.Why.Roots[0].Files.Modified, []string{"src/index.js"}) {
		t.Errorf("web#build's why %+v: want lib#build's key as what moved, src/index.js as its root", web.Why)
	}
	if w := nodes["web#lint"]; w.Cache != store.StatusHit || w.Why != nil || w.Command != "true" || w.Executions != 1 ||
		w.LastStatus != store.StatusMiss || w.HitRate == nil || *w.HitRate != 0 || w.P50Ms == nil || w.P99Ms == nil {
		t.Errorf("web#lint: %+v; want a predicted hit with one execution's statistics", w)
	}
	if d := nodes["api#deploy"]; d.Cacheable || d.Why == nil || !strings.HasPrefix(d.Why.Reason, "it is never cached (cache: false)") ||
		d.LastStatus != store.StatusBlocked {
		t.Errorf("api#deploy: %+v; want never cached, last blocked", d)
	}
	if a := nodes["api#test"]; a.LastStatus != store.StatusFailed || !slices.Equal(a.Inputs, []string{"src/**", "test.sh"}) {
		t.Errorf("api#test: last %s, inputs %v", a.LastStatus, a.Inputs)
	}
	kinds := map[string]string{}
	for _, e := range g.Edges {
		kinds[e.From+" → "+e.To] = e.Kind
	}
	if kinds["web#build → lib#build"] != graphview.EdgeUpstream || kinds["web#test → web#build"] != graphview.EdgeDependsOn ||
		len(g.Edges) != 6 {
		t.Errorf("edges %v", kinds)
	}
	if len(g.CriticalPath) < 2 || g.CriticalPath[0] != "lib#build" {
		t.Fatalf("critical path %v: want it to start at lib#build", g.CriticalPath)
	}
	for _, id := range g.CriticalPath {
		if !nodes[id].Critical {
			t.Errorf("%s is on the critical path, not marked", id)
		}
	}
	if len(g.Projects) != 3 || !slices.Equal(g.Projects[0].Tags, []string{"backend"}) {
		t.Errorf("projects %+v", g.Projects)
	}
}

// DOT is what Graphviz reads, Mermaid and DOT are the same bytes for the same graph whatever
// order the selection came in, and every node and edge is in both.
func TestTextFormatsAreDeterministic(t *testing.T) {
	dir := smallWorkspace(t)
	run(t, dir, request())
	var dot1, dot2, mmd1, mmd2 bytes.Buffer
	g := build(t, dir, request())
	if err := g.WriteDOT(&dot1); err != nil {
		t.Fatal(err)
	}
	if err := g.WriteMermaid(&mmd1); err != nil {
		t.Fatal(err)
	}
	g2 := build(t, dir, request("lint", "deploy", "test", "build"))
	slices.Reverse(g2.Tasks)
	if err := g2.WriteDOT(&dot2); err != nil {
		t.Fatal(err)
	}
	if err := g2.WriteMermaid(&mmd2); err != nil {
		t.Fatal(err)
	}
	if dot1.String() != dot2.String() || mmd1.String() != mmd2.String() {
		t.Errorf("two builds of one graph differ:\n%s\n%s\n%s\n%s", dot1.String(), dot2.String(), mmd1.String(), mmd2.String())
	}
	for _, n := range g.Tasks {
		if !strings.Contains(dot1.String(), `"`+n.ID+`" [label="`+n.ID) {
			t.Errorf("DOT lacks node %s", n.ID)
		}
	}
	if got := strings.Count(dot1.String(), " -> "); got != len(g.Edges) {
		t.Errorf("DOT has %d edges, want %d", got, len(g.Edges))
	}
	if got := strings.Count(mmd1.String(), "-->") + strings.Count(mmd1.String(), "-.->"); got != len(g.Edges) {
		t.Errorf("Mermaid has %d edges, want %d", got, len(g.Edges))
	}
	dot, err := exec.LookPath("dot")
	if err != nil {
		t.Skip("Graphviz's dot is not installed (apt-get install graphviz; .ci/run installs it): DOT not tried in it")
	}
	cmd := exec.Command(dot, "-Tsvg")
	cmd.Stdin = &dot1
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("<svg")) {
		t.Fatalf("dot -Tsvg: %v\n%s", err, out)
	}
	for _, n := range g.Tasks {
		if !bytes.Contains(out, []byte("<title>"+n.ID+"</title>")) {
			t.Errorf("Graphviz drew no node %s", n.ID)
		}
	}
}
