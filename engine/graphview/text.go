package graphview

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vzn/vx/engine/store"
)

// The colours of a node by predicted cache status, shared by DOT, Mermaid and the page's style.
const (
	colourHit      = "#d8f0da"
	strokeHit      = "#2e7d32"
	colourMiss     = "#ffe6bf"
	strokeMiss     = "#b26a00"
	colourNoCache  = "#e6e6e6"
	strokeNoCache  = "#707070"
	strokeCritical = "#c62828"
)

// maxLabelChars is the longest label a box of the page holds.
const maxLabelChars = 28

// shortLabel is id in at most max characters where it can be: a longer id loses the end of its
// project's name, marked "…", and keeps its "#task" whole (in 28 characters,
// `@scope/a-very-long-package#build` reads `@scope/a-very-long-pa…#build`). A task name too long
// to leave a character of the project keeps all of it, after "…": a task is never cut.
func shortLabel(id string, max int) string {
	runes := []rune(id)
	if len(runes) <= max {
		return id
	}
	project, task, ok := strings.Cut(id, "#")
	if !ok {
		return string(runes[:max-1]) + "…"
	}
	keep := max - 1 - 1 - utf8.RuneCountInString(task) // "…" and "#"
	if keep < 1 {
		return "…#" + task
	}
	return string([]rune(project)[:keep]) + "…#" + task
}

// label is a node's text: its id, and its p50 when it has one.
func (n *Node) label() (id, p50 string) {
	if n.P50Ms != nil {
		p50 = "p50 " + Millis(*n.P50Ms)
	}
	return n.ID, p50
}

// class is the node's colour class: hit, miss or nocache.
func (n *Node) class() string {
	switch {
	case !n.Cacheable:
		return "nocache"
	case n.Cache == store.StatusHit:
		return "hit"
	}
	return "miss"
}

// colours are the fill and stroke of a colour class.
func colours(class string) (fill, stroke string) {
	switch class {
	case "hit":
		return colourHit, strokeHit
	case "miss":
		return colourMiss, strokeMiss
	}
	return colourNoCache, strokeNoCache
}

// Millis prints a duration in milliseconds for people, to two significant places past the
// second (1.2s, 340ms, 2m5s).
func Millis(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		return strconv.FormatInt(ms, 10) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	return d.Round(time.Second).String()
}

// sortedNodes answers the nodes sorted by id, so that a text form does not depend on the order
// the selection came in.
func (g *Graph) sortedNodes() []*Node {
	out := make([]*Node, len(g.Tasks))
	for i := range g.Tasks {
		out[i] = &g.Tasks[i]
	}
	slices.SortFunc(out, func(a, b *Node) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// WriteDOT writes the graph for Graphviz: a node per task (filled by its predicted cache status,
// labelled with its p50), an edge from each task to each task it depends on (dashed within a
// project), the critical path in red, dependencies on the left; nodes and edges sorted by id.
func (g *Graph) WriteDOT(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", dotID("vx "+g.Title))
	b.WriteString("  rankdir=RL;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n" +
		"  edge [arrowsize=0.6];\n")
	for _, n := range g.sortedNodes() {
		id, p50 := n.label()
		label := id
		if p50 != "" {
			label += "\n" + p50
		}
		fill, stroke := colours(n.class())
		width := ""
		if n.Critical {
			stroke, width = strokeCritical, ", penwidth=2.5"
		}
		attrs := fmt.Sprintf("label=%s, fillcolor=%s, color=%s, tooltip=%s%s", dotID(label), dotID(fill), dotID(stroke),
			dotID(string(n.Cache)+": "+n.Command), width)
		fmt.Fprintf(&b, "  %s [%s];\n", dotID(n.ID), attrs)
	}
	for _, e := range g.Edges {
		var attrs []string
		if e.Kind == EdgeDependsOn {
			attrs = append(attrs, "style=dashed")
		}
		if e.Critical {
			attrs = append(attrs, "color="+dotID(strokeCritical), "penwidth=2.5")
		}
		suffix := ""
		if len(attrs) > 0 {
			suffix = " [" + strings.Join(attrs, ", ") + "]"
		}
		fmt.Fprintf(&b, "  %s -> %s%s;\n", dotID(e.From), dotID(e.To), suffix)
	}
	b.WriteString(dotLegend())
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// legendEntry is a line of a picture's legend: a colour class (hit, miss, nocache, critical)
// or an edge kind, and what it means.
type legendEntry struct{ class, meaning string }

// legend is what a graph's colours, outlines and edge styles mean, in every picture of it.
var legend = []legendEntry{
	{"hit", "would hit: restored from the cache"},
	{"miss", "would run: no cache entry for its key"},
	{"nocache", "never cached (cache: false, persistent): always runs"},
	{"critical", "red outline and arrows: the critical path, predicted to end last"},
	{EdgeUpstream, "solid arrow: depends on a task of another project (^task)"},
	{EdgeDependsOn, "dashed arrow: depends on a task of its own project"},
}

// dotLegend is the legend as one DOT node: a table whose swatches are the nodes' colours; its
// id has no "#", so no task's id is it.
func dotLegend() string {
	var b strings.Builder
	b.WriteString(`  legend [shape=plaintext, style="", label=<<table border="0" cellborder="1" cellspacing="2" cellpadding="3">` +
		`<tr><td colspan="2"><b>legend</b></td></tr>`)
	for _, e := range legend {
		swatch := `<td border="0">  </td>`
		switch e.class {
		case "hit", "miss", "nocache":
			fill, stroke := colours(e.class)
			swatch = fmt.Sprintf(`<td bgcolor="%s" color="%s">  </td>`, fill, stroke)
		case "critical":
			swatch = fmt.Sprintf(`<td bgcolor="#ffffff" color="%s">  </td>`, strokeCritical)
		case EdgeUpstream:
			swatch = `<td border="0">──</td>`
		case EdgeDependsOn:
			swatch = `<td border="0">- -</td>`
		}
		fmt.Fprintf(&b, `<tr>%s<td border="0" align="left">%s</td></tr>`, swatch, htmlText(e.meaning))
	}
	b.WriteString("</table>>];\n")
	return b.String()
}

// htmlText escapes s for a DOT HTML label.
func htmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// mermaidLegend is the legend as a Mermaid subgraph of nodes in the nodes' classes (ids
// legend_*, which no task's n0, n1, … is), with no edge, so that the graph's links keep their
// numbers.
func mermaidLegend(b *strings.Builder) {
	b.WriteString("  subgraph legend [legend]\n")
	for _, e := range legend {
		fmt.Fprintf(b, "    legend_%s[\"%s\"]\n", mermaidClassID(e.class), mermaidText(e.meaning))
	}
	b.WriteString("  end\n")
}

// mermaidClassID is a legend entry's name in a Mermaid id: "^" is "upstream".
func mermaidClassID(class string) string {
	if class == EdgeUpstream {
		return "upstream"
	}
	return class
}

// dotID quotes s as a DOT string: backslashes and quotes escaped, line breaks as \n.
func dotID(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\r", "", "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// WriteMermaid writes the graph as a Mermaid flowchart: dependencies on the left, a node per
// task (n0, n1, … in the order of the ids) classed hit, miss or nocache, and critical; an edge
// from each task to each task it depends on (dotted within a project), the critical path's
// styled. Nodes and edges are sorted.
func (g *Graph) WriteMermaid(w io.Writer) error {
	var b strings.Builder
	b.WriteString("flowchart RL\n")
	ids := map[string]string{}
	classes := map[string][]string{}
	for k, n := range g.sortedNodes() {
		ids[n.ID] = "n" + strconv.Itoa(k)
		id, p50 := n.label()
		label := mermaidText(id)
		if p50 != "" {
			label += "<br/>" + mermaidText(p50)
		}
		fmt.Fprintf(&b, "  %s[\"%s\"]\n", ids[n.ID], label)
		classes[n.class()] = append(classes[n.class()], ids[n.ID])
		if n.Critical {
			classes["critical"] = append(classes["critical"], ids[n.ID])
		}
	}
	mermaidLegend(&b)
	var critical []string
	for k, e := range g.Edges {
		arrow := "-->"
		if e.Kind == EdgeDependsOn {
			arrow = "-.->"
		}
		fmt.Fprintf(&b, "  %s %s %s\n", ids[e.From], arrow, ids[e.To])
		if e.Critical {
			critical = append(critical, strconv.Itoa(k))
		}
	}
	for _, c := range []string{"hit", "miss", "nocache"} {
		fill, stroke := colours(c)
		fmt.Fprintf(&b, "  classDef %s fill:%s,stroke:%s\n", c, fill, stroke)
	}
	fmt.Fprintf(&b, "  classDef critical stroke:%s,stroke-width:3px\n", strokeCritical)
	for _, c := range []string{"hit", "miss", "nocache", "critical"} {
		if len(classes[c]) > 0 {
			fmt.Fprintf(&b, "  class %s %s\n", strings.Join(classes[c], ","), c)
		}
		fmt.Fprintf(&b, "  class legend_%s %s\n", c, c)
	}
	if len(critical) > 0 {
		fmt.Fprintf(&b, "  linkStyle %s stroke:%s,stroke-width:3px\n", strings.Join(critical, ","), strokeCritical)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mermaidText escapes s for a quoted Mermaid label: every character that Mermaid or the HTML it
// renders would read otherwise becomes an entity code (#35; for #, #quot; …).
func mermaidText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString("#quot;")
		case r == '#' || r == '<' || r == '>' || r == '&' || r == '`' || r < ' ' || r == '\\':
			fmt.Fprintf(&b, "#%d;", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
