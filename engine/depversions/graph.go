package depversions

import (
	"path"
	"slices"
	"strings"
	"sync"
)

// graph is what every format reduces to: the external packages the lockfile resolved (nodes), the
// dependencies each one resolved, and each project's direct dependencies. Workspace packages are
// never nodes, so no walk can pass through one.
type graph struct {
	// importers maps a project folder (root-relative slash path, "." for the root) to its direct
	// external dependencies.
	importers map[string][]edge
	// deps holds, per node, the external dependencies it resolved.
	deps [][]edge
	// labels holds each distinct (name, version) an edge is reported as, sorted, so that sorted
	// label ids group a name's versions in order.
	labels []label

	mu sync.Mutex
	// memo is the closure state, filled lazily under mu by reach.
	memo closureMemo
}

// label is one entry of an answer: a package name as its dependent names it (an alias keeps its
// own name) and the version text the lockfile resolved it to.
type label struct{ name, version string }

// edge is one resolved dependency: what it is reported as and the node it resolves to.
type edge struct {
	label int32
	node  int32
}

// builder assembles a graph; the format readers use it to add nodes, edges and importers.
type builder struct {
	g        *graph
	labelIDs map[label]int32
	// base is the lockfile's folder relative to the root ("." at the root): importer folders in a
	// lockfile are relative to the lockfile.
	base string
}

func newBuilder(base string) *builder {
	return &builder{g: &graph{importers: map[string][]edge{}}, labelIDs: map[label]int32{}, base: base}
}

// node adds a package and answers its id.
func (b *builder) node() int32 {
	b.g.deps = append(b.g.deps, nil)
	return int32(len(b.g.deps) - 1)
}

// edge makes the edge to node reported as name at version. The strings are cloned: they are
// often slices of the whole lockfile text, which the graph must not keep alive.
func (b *builder) edge(name, version string, node int32) edge {
	l := label{name, version}
	id, ok := b.labelIDs[l]
	if !ok {
		id = int32(len(b.g.labels))
		b.g.labels = append(b.g.labels, label{strings.Clone(name), strings.Clone(version)})
		b.labelIDs[l] = id
	}
	return edge{label: id, node: node}
}

// done sorts the labels (renumbering the edges) and answers the graph.
func (b *builder) done() *graph {
	g := b.g
	order := make([]int32, len(g.labels))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(x, y int32) int {
		a, b := g.labels[x], g.labels[y]
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return strings.Compare(a.version, b.version)
	})
	renumber := make([]int32, len(order))
	labels := make([]label, len(order))
	for to, from := range order {
		renumber[from] = int32(to)
		labels[to] = g.labels[from]
	}
	g.labels = labels
	for _, edges := range g.deps {
		for i := range edges {
			edges[i].label = renumber[edges[i].label]
		}
	}
	for _, edges := range g.importers {
		for i := range edges {
			edges[i].label = renumber[edges[i].label]
		}
	}
	return g
}

// depend records that node from resolved e.
func (b *builder) depend(from int32, e edge) {
	b.g.deps[from] = append(b.g.deps[from], e)
}

// importer records a project folder (relative to the lockfile) and answers its key, so that a
// project without external dependencies is still known.
func (b *builder) importer(dir string) string {
	key := path.Join(b.base, dir)
	if _, ok := b.g.importers[key]; !ok {
		b.g.importers[key] = []edge{}
	}
	return key
}

// direct records a direct dependency of the project folder key (from importer).
func (b *builder) direct(key string, e edge) {
	b.g.importers[key] = append(b.g.importers[key], e)
}

// closureMemo keeps, per node, the labels of everything the node reaches (its closure), computed
// once for the whole strongly connected component it belongs to (Tarjan's algorithm, run lazily
// from the nodes a question needs and resumed by the next one).
type closureMemo struct {
	closure [][]int32 // sorted label ids; shared by the members of a component
	done    []bool
	index   []int32 // Tarjan's visit order, 1-based; 0 when not visited
	low     []int32
	onStack []bool
	stack   []int32
	counter int32
	// mark and stamp collect a union of labels without a map: mark[l] == stamp means l is in.
	mark  []uint32
	stamp uint32
}

// reach answers the labels of the direct edges and of everything they reach, sorted.
func (g *graph) reach(direct []edge) []int32 {
	g.mu.Lock()
	defer g.mu.Unlock()
	m := &g.memo
	if m.done == nil {
		n := len(g.deps)
		m.closure = make([][]int32, n)
		m.done = make([]bool, n)
		m.index = make([]int32, n)
		m.low = make([]int32, n)
		m.onStack = make([]bool, n)
		m.mark = make([]uint32, len(g.labels))
	}
	for _, e := range direct {
		if !m.done[e.node] {
			g.connect(e.node)
		}
	}
	return m.union(direct, nil)
}

// union collects the labels of edges and the closures of their nodes (of those follow accepts,
// when it is not nil), sorted.
func (m *closureMemo) union(edges []edge, follow func(edge) bool) []int32 {
	var out []int32
	m.stamp++
	if m.stamp == 0 { // wrapped: clear so that no stale mark matches
		clear(m.mark)
		m.stamp = 1
	}
	add := func(l int32) {
		if m.mark[l] != m.stamp {
			m.mark[l] = m.stamp
			out = append(out, l)
		}
	}
	for _, e := range edges {
		add(e.label)
		if follow == nil || follow(e) {
			for _, l := range m.closure[e.node] {
				add(l)
			}
		}
	}
	slices.Sort(out)
	return out
}

// connect is Tarjan's strongconnect from v. When v roots a component, every member gets the same
// closure: the labels of the members' edges and the closures of the components they lead to
// (all done by then, since Tarjan finishes successors first).
func (g *graph) connect(v int32) {
	m := &g.memo
	m.counter++
	m.index[v], m.low[v] = m.counter, m.counter
	m.stack = append(m.stack, v)
	m.onStack[v] = true
	for _, e := range g.deps[v] {
		w := e.node
		switch {
		case m.done[w]:
		case m.index[w] == 0:
			g.connect(w)
			m.low[v] = min(m.low[v], m.low[w])
		case m.onStack[w]:
			m.low[v] = min(m.low[v], m.index[w])
		}
	}
	if m.low[v] != m.index[v] {
		return
	}
	i := len(m.stack) - 1
	for m.stack[i] != v {
		i--
	}
	members := m.stack[i:]
	var edges []edge
	for _, u := range members {
		edges = append(edges, g.deps[u]...)
	}
	for _, u := range members {
		m.onStack[u] = false
	}
	// Members are not done yet, so their (empty) closures are skipped; every other node reached
	// is done.
	closure := m.union(edges, func(e edge) bool { return m.done[e.node] })
	for _, u := range members {
		m.closure[u] = closure
		m.done[u] = true
	}
	m.stack = m.stack[:i]
}

// answer turns sorted label ids into the Packages map: name → versions, in order, joined by ", ".
// Labels are sorted, so a name's versions are consecutive.
func (g *graph) answer(ids []int32) map[string]string {
	out := make(map[string]string, len(ids))
	for i := 0; i < len(ids); {
		l := g.labels[ids[i]]
		j := i + 1
		for j < len(ids) && g.labels[ids[j]].name == l.name {
			j++
		}
		version := l.version
		if j > i+1 {
			versions := make([]string, 0, j-i)
			for _, id := range ids[i:j] {
				versions = append(versions, g.labels[id].version)
			}
			version = strings.Join(versions, ", ")
		}
		out[l.name] = version
		i = j
	}
	return out
}
