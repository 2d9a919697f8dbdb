package graphview

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A long task id is shortened in its project's name; its #task is never cut.
func TestShortLabelKeepsTheTask(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"app#build", "app#build"},
		{"@scope/exactly-28-chars#abcd", "@scope/exactly-28-chars#abcd"},
		{"@scope/a-very-long-package-name-indeed#build", "@scope/a-very-long-pa…#build"},
		{"@scope/a-very-long-package-name-indeed#test:clean-post", "@scope/a-ve…#test:clean-post"},
		{"@é/ünïcödé-package-name-that-is-long#build", "@é/ünïcödé-package-na…#build"},
		{"app#a-task-name-longer-than-any-box-holds", "…#a-task-name-longer-than-any-box-holds"},
	} {
		got := shortLabel(tc.id, maxLabelChars)
		if got != tc.want {
			t.Errorf("shortLabel(%q) = %q, want %q", tc.id, got, tc.want)
		}
		task := tc.id[strings.IndexByte(tc.id, '#'):]
		if !strings.HasSuffix(got, task) {
			t.Errorf("shortLabel(%q) = %q cuts its task %q", tc.id, got, task)
		}
		if n := utf8.RuneCountInString(got); n > maxLabelChars && len(task)+1 <= maxLabelChars {
			t.Errorf("shortLabel(%q) = %q has %d characters", tc.id, got, n)
		}
	}
}

// Every picture says what its colours, outlines and edge styles mean.
func TestPicturesHaveALegend(t *testing.T) {
	g := &Graph{Title: "build", Tasks: []Node{
		{ID: "app#build", Label: "app#build", Project: "app", Cacheable: true, Cache: "hit", DependsOn: []string{"lib#build"}},
		{ID: "lib#build", Label: "lib#build", Project: "lib", Cacheable: true, Cache: "miss"},
	}, Edges: []Edge{{From: "app#build", To: "lib#build", Kind: EdgeUpstream}}}
	var dot, mmd strings.Builder
	if err := g.WriteDOT(&dot); err != nil {
		t.Fatal(err)
	}
	if err := g.WriteMermaid(&mmd); err != nil {
		t.Fatal(err)
	}
	for _, e := range legend {
		if !strings.Contains(dot.String(), htmlText(e.meaning)) {
			t.Errorf("DOT lacks the legend's %q", e.meaning)
		}
		if !strings.Contains(mmd.String(), mermaidText(e.meaning)) {
			t.Errorf("Mermaid lacks the legend's %q", e.meaning)
		}
	}
	for _, want := range []string{`<td bgcolor="` + colourHit + `" color="` + strokeHit + `">`, `<td bgcolor="#ffffff" color="` + strokeCritical + `">`} {
		if !strings.Contains(dot.String(), want) {
			t.Errorf("DOT legend lacks the swatch %s:\n%s", want, dot.String())
		}
	}
	for _, want := range []string{"  subgraph legend [legend]\n", "  class legend_hit hit\n", "  class legend_critical critical\n"} {
		if !strings.Contains(mmd.String(), want) {
			t.Errorf("Mermaid legend lacks %q:\n%s", want, mmd.String())
		}
	}
	if n := strings.Count(dot.String(), " -> "); n != len(g.Edges) {
		t.Errorf("DOT has %d edges, want the graph's %d: the legend adds none", n, len(g.Edges))
	}
	if n := strings.Count(mmd.String(), "-->") + strings.Count(mmd.String(), "-.->"); n != len(g.Edges) {
		t.Errorf("Mermaid has %d links, want the graph's %d", n, len(g.Edges))
	}
}
