package graphview

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

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
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
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
