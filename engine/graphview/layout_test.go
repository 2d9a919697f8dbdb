package graphview

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func graphOf(deps map[string][]string, ids ...string) ([]Node, []Edge) {
	var nodes []Node
	var edges []Edge
	for _, id := range ids {
		nodes = append(nodes, Node{ID: id})
		for _, d := range deps[id] {
			edges = append(edges, Edge{From: id, To: d})
		}
	}
	return nodes, edges
}

// Two chains drawn crossed in the order of the ids (a above b, but c, which depends on b, above d,
// which depends on a) come out uncrossed.
func TestLayoutUncrossesWhatItCan(t *testing.T) {
	nodes, edges := graphOf(map[string][]string{"c": {"b"}, "d": {"a"}, "e": {"c"}, "f": {"d"}}, "a", "b", "c", "d", "e", "f")
	l := newLayered(nodes, edges)
	if c := l.crossings(); c != 1 {
		t.Fatalf("the order of the ids has %d crossings, want 1", c)
	}
	l.reduceCrossings()
	if c := l.crossings(); c != 0 {
		t.Errorf("after the sweeps: %d crossings, want 0", c)
	}
	w, h, layers := layout(nodes, edges)
	at := map[string]Node{}
	for _, n := range nodes {
		at[n.ID] = n
	}
	if layers != 3 || at["a"].X != at["b"].X || at["c"].X <= at["a"].X || at["e"].X <= at["c"].X {
		t.Errorf("layers %d, x %v", layers, at)
	}
	if (at["a"].Y < at["b"].Y) != (at["d"].Y < at["c"].Y) || (at["d"].Y < at["c"].Y) != (at["f"].Y < at["e"].Y) {
		t.Errorf("crossed: %+v", at)
	}
	if at["c"].Y != at["e"].Y || at["b"].Y != at["c"].Y {
		t.Errorf("a chain is not drawn straight: b %v, c %v, e %v", at["b"].Y, at["c"].Y, at["e"].Y)
	}
	for _, n := range nodes {
		if n.X < 0 || n.Y < 0 || n.X+n.W > w || n.Y+n.H > h {
			t.Errorf("%s at (%v, %v) lies outside %v × %v", n.ID, n.X, n.Y, w, h)
		}
	}
}

// On a random graph of the generator's shape the sweeps never leave more crossings than the order
// of the ids had, nodes of a layer never overlap, and tasks with no edge go to a grid below.
func TestLayoutOfARandomGraph(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	deps := map[string][]string{}
	var ids []string
	for i := range 300 {
		id := fmt.Sprintf("p%03d#build", i)
		ids = append(ids, id, fmt.Sprintf("p%03d#lint", i))
		for k := 0; i > 0 && k < rng.IntN(4); k++ {
			deps[id] = append(deps[id], fmt.Sprintf("p%03d#build", rng.IntN(i)))
		}
	}
	nodes, edges := graphOf(deps, ids...)
	before := newLayered(nodes, edges).crossings()
	l := newLayered(nodes, edges)
	l.reduceCrossings()
	if after := l.crossings(); after > before || after*2 > before {
		t.Errorf("crossings %d after the sweeps, %d before: want at most half", after, before)
	}
	_, _, _ = layout(nodes, edges)
	byX := map[float64][]Node{}
	gridTop := 0.0
	for _, n := range nodes {
		if n.Layer >= 0 {
			byX[n.X] = append(byX[n.X], n)
			gridTop = max(gridTop, n.Y+n.H)
		}
	}
	for _, n := range nodes {
		if n.Layer < 0 && n.Y <= gridTop {
			t.Errorf("%s has no edge but is not below the layers", n.ID)
		}
	}
	for x, col := range byX {
		for i := range col {
			for j := i + 1; j < len(col); j++ {
				if a, b := col[i], col[j]; a.Y < b.Y+b.H && b.Y < a.Y+a.H {
					t.Errorf("at x %v, %s and %s overlap", x, a.ID, b.ID)
				}
			}
		}
	}
}
