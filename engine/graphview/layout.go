package graphview

import (
	"cmp"
	"math"
	"slices"
)

// The layout's measures: a node's box, the gaps between layers and between nodes of a layer, the
// margin around everything.
const (
	nodeW  = 210.0
	nodeH  = 40.0
	gapX   = 90.0
	gapY   = 14.0
	margin = 24.0
	// sweeps bounds the barycenter sweeps of the crossing reduction.
	sweeps = 24
)

// layered is the graph as the layout sees it: each node's dependencies and dependents by index,
// its layer, and the layers' orders.
type layered struct {
	deps, dependents [][]int
	layer            []int
	layers           [][]int // node indexes by layer, in order
	pos              []int   // each node's index in its layer
}

// layout places the nodes (in dependency order), in layers by dependency depth from left to
// right, each layer's order chosen to reduce the crossings of the edges, each node as near as its
// layer allows to the nodes it is joined to. A node with no dependency and no dependent goes to a
// grid below the layers. It answers the extent of the drawing and the number of layers.
func layout(nodes []Node, edges []Edge) (width, height float64, layers int) {
	l := newLayered(nodes, edges)
	l.reduceCrossings()
	ys := l.coordinates()
	bottom := 0.0
	for i := range nodes {
		nodes[i].W, nodes[i].H, nodes[i].Layer = nodeW, nodeH, l.layer[i]
		if l.layer[i] >= 0 {
			nodes[i].X = margin + float64(l.layer[i])*(nodeW+gapX)
			nodes[i].Y = margin + ys[i]
			bottom = math.Max(bottom, nodes[i].Y+nodeH)
			width = math.Max(width, nodes[i].X+nodeW)
		}
	}
	top := margin
	if bottom > 0 {
		top = bottom + 3*gapY
	}
	var lone []int
	for i := range nodes {
		if l.layer[i] < 0 {
			lone = append(lone, i)
		}
	}
	slices.SortFunc(lone, func(a, b int) int { return cmp.Compare(nodes[a].ID, nodes[b].ID) })
	cols := max(1, len(l.layers), int(math.Ceil(math.Sqrt(float64(len(lone))))))
	for k, i := range lone {
		nodes[i].X = margin + float64(k%cols)*(nodeW+gapX)
		nodes[i].Y = top + float64(k/cols)*(nodeH+gapY)
		bottom = math.Max(bottom, nodes[i].Y+nodeH)
		width = math.Max(width, nodes[i].X+nodeW)
	}
	return width + margin, bottom + margin, len(l.layers)
}

// newLayered layers the nodes: a node's layer is one more than its deepest dependency's, and -1
// for a node with no dependency and no dependent. Each layer starts in the order of the ids.
func newLayered(nodes []Node, edges []Edge) *layered {
	index := make(map[string]int, len(nodes))
	for i, n := range nodes {
		index[n.ID] = i
	}
	l := &layered{deps: make([][]int, len(nodes)), dependents: make([][]int, len(nodes)), layer: make([]int, len(nodes))}
	for _, e := range edges {
		from, okF := index[e.From]
		to, okT := index[e.To]
		if okF && okT && from != to {
			l.deps[from] = append(l.deps[from], to)
			l.dependents[to] = append(l.dependents[to], from)
		}
	}
	for i := range l.layer {
		l.layer[i] = -2 // not yet known
	}
	var depth func(i int) int
	depth = func(i int) int {
		if l.layer[i] > -2 {
			return max(l.layer[i], 0)
		}
		l.layer[i] = 0 // a cycle (none in a resolved workspace) stops here
		d := 0
		for _, j := range l.deps[i] {
			d = max(d, depth(j)+1)
		}
		l.layer[i] = d
		return d
	}
	for i := range nodes {
		if len(l.deps[i]) == 0 && len(l.dependents[i]) == 0 {
			l.layer[i] = -1
		} else {
			depth(i)
		}
	}
	for i, layer := range l.layer {
		if layer < 0 {
			continue
		}
		for len(l.layers) <= layer {
			l.layers = append(l.layers, nil)
		}
		l.layers[layer] = append(l.layers[layer], i)
	}
	for _, layer := range l.layers {
		slices.SortFunc(layer, func(a, b int) int { return cmp.Compare(nodes[a].ID, nodes[b].ID) })
	}
	l.pos = make([]int, len(nodes))
	l.index()
	return l
}

// index sets each node's position from the layers' orders.
func (l *layered) index() {
	for _, layer := range l.layers {
		for p, i := range layer {
			l.pos[i] = p
		}
	}
}

// reduceCrossings sweeps the layers down (each node by the barycenter of its dependencies) and up
// (of its dependents), keeping the order with the fewest crossings seen.
func (l *layered) reduceCrossings() {
	best := l.snapshot()
	bestCrossings := l.crossings()
	for s := 0; s < sweeps && bestCrossings > 0; s++ {
		if s%2 == 0 {
			for k := 1; k < len(l.layers); k++ {
				l.sortLayer(k, l.deps)
			}
		} else {
			for k := len(l.layers) - 2; k >= 0; k-- {
				l.sortLayer(k, l.dependents)
			}
		}
		if c := l.crossings(); c < bestCrossings {
			best, bestCrossings = l.snapshot(), c
		}
	}
	l.layers = best
	l.index()
}

// sortLayer orders layer k by the barycenter of each node's neighbours (their positions, centred
// on their layers); a node without one keeps its place.
func (l *layered) sortLayer(k int, neighbours [][]int) {
	layer := l.layers[k]
	key := make(map[int]float64, len(layer))
	for _, i := range layer {
		key[i] = l.centred(i)
		if ns := neighbours[i]; len(ns) > 0 {
			sum := 0.0
			for _, j := range ns {
				sum += l.centred(j)
			}
			key[i] = sum / float64(len(ns))
		}
	}
	slices.SortStableFunc(layer, func(a, b int) int {
		if c := cmp.Compare(key[a], key[b]); c != 0 {
			return c
		}
		return cmp.Compare(l.pos[a], l.pos[b])
	})
	for p, i := range layer {
		l.pos[i] = p
	}
}

// centred is node i's position in its layer, measured from the layer's middle.
func (l *layered) centred(i int) float64 {
	return float64(l.pos[i]) - float64(len(l.layers[l.layer[i]])-1)/2
}

func (l *layered) snapshot() [][]int {
	out := make([][]int, len(l.layers))
	for k, layer := range l.layers {
		out[k] = slices.Clone(layer)
	}
	return out
}

// crossings counts the pairs of edges that cross among the edges joining the same two layers:
// between adjacent layers, every crossing.
func (l *layered) crossings() int {
	type pair struct{ from, to int }
	groups := map[pair][][2]int{}
	for i, ds := range l.deps {
		for _, j := range ds {
			p := pair{l.layer[j], l.layer[i]}
			groups[p] = append(groups[p], [2]int{l.pos[j], l.pos[i]})
		}
	}
	total := 0
	for _, es := range groups {
		slices.SortFunc(es, func(a, b [2]int) int {
			if c := cmp.Compare(a[0], b[0]); c != 0 {
				return c
			}
			return cmp.Compare(a[1], b[1])
		})
		ends := make([]int, len(es))
		for k, e := range es {
			ends[k] = e[1]
		}
		total += inversions(ends)
	}
	return total
}

// inversions counts the pairs i < j with s[i] > s[j], by merge sort (s is sorted on return).
func inversions(s []int) int {
	if len(s) < 2 {
		return 0
	}
	mid := len(s) / 2
	n := inversions(s[:mid]) + inversions(s[mid:])
	merged := make([]int, 0, len(s))
	i, j := 0, mid
	for i < mid && j < len(s) {
		if s[j] < s[i] {
			merged = append(merged, s[j])
			n += mid - i
			j++
		} else {
			merged = append(merged, s[i])
			i++
		}
	}
	merged = append(merged, s[i:mid]...)
	merged = append(merged, s[j:]...)
	copy(s, merged)
	return n
}

// coordinates answers each layered node's y: a first layer stacked, then passes down (each node
// as near as it may to the mean of its dependencies), up (of its dependents) and down again, each
// layer keeping its order and its nodes apart; everything moved so that the top is at 0.
func (l *layered) coordinates() []float64 {
	ys := make([]float64, len(l.layer))
	step := nodeH + gapY
	for _, layer := range l.layers {
		for p, i := range layer {
			ys[i] = float64(p) * step
		}
	}
	for pass := range 3 {
		if pass == 1 {
			for k := len(l.layers) - 2; k >= 0; k-- {
				l.place(l.layers[k], l.dependents, ys, step)
			}
			continue
		}
		for k := 1; k < len(l.layers); k++ {
			l.place(l.layers[k], l.deps, ys, step)
		}
	}
	top := math.Inf(1)
	for i, y := range ys {
		if l.layer[i] >= 0 {
			top = math.Min(top, y)
		}
	}
	for i := range ys {
		ys[i] -= top
	}
	return ys
}

// place moves a layer's nodes as near as may be to the mean y of their neighbours (a node without
// any stays where it is), keeping their order and at least step apart: the least squares fit
// under those constraints (pool adjacent violators on y - k·step).
func (l *layered) place(layer []int, neighbours [][]int, ys []float64, step float64) {
	want := make([]float64, len(layer))
	for k, i := range layer {
		want[k] = ys[i]
		if ns := neighbours[i]; len(ns) > 0 {
			sum := 0.0
			for _, j := range ns {
				sum += ys[j]
			}
			want[k] = sum / float64(len(ns))
		}
		want[k] -= float64(k) * step
	}
	type block struct {
		sum   float64
		count int
	}
	var blocks []block
	for _, w := range want {
		blocks = append(blocks, block{w, 1})
		for len(blocks) > 1 {
			a, b := blocks[len(blocks)-2], blocks[len(blocks)-1]
			if a.sum/float64(a.count) <= b.sum/float64(b.count) {
				break
			}
			blocks = append(blocks[:len(blocks)-2], block{a.sum + b.sum, a.count + b.count})
		}
	}
	k := 0
	for _, b := range blocks {
		mean := b.sum / float64(b.count)
		for range b.count {
			ys[layer[k]] = mean + float64(k)*step
			k++
		}
	}
}
