package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// Lister chooses, at call time, which of the registered tools are available now
// (e.g. runTasks hidden when the workspace says mcp({ run: false })). It gets every
// registered tool in registration order and returns those to list, a subset in the
// same order. A tool a Lister leaves out is also unknown to Lookup.
type Lister func(ctx context.Context, all []Tool) []Tool

// Registry holds the tools the server lists and calls. It is immutable after
// construction and safe for concurrent use.
type Registry struct {
	set    func() *toolSet // the tools; built on first use for a Lazy registry
	lister Lister
	budget func(ctx context.Context) int
}

// toolSet is a registry's tools, in registration order, and their indexes by name.
type toolSet struct {
	tools  []Tool
	byName map[string]int
}

// NewRegistry returns a registry of tools, listed in the order given. It panics on
// a programming error: an empty or duplicate name, a tool not built by New, or a schema
// that is not a JSON object or leaves the portable subset.
func NewRegistry(tools ...Tool) *Registry {
	set := newToolSet(tools)
	return &Registry{set: func() *toolSet { return set }}
}

// Lazy returns a registry of the tools build returns, called once, on the registry's first List
// or Lookup, and checked then as NewRegistry checks them. A server holding it answers
// initialize, server/discover and ping without building a tool: deriving the schemas of vx's
// fifteen by reflection takes longer than the process start.
func Lazy(build func() []Tool) *Registry {
	return &Registry{set: sync.OnceValue(func() *toolSet { return newToolSet(build()) })}
}

func newToolSet(tools []Tool) *toolSet {
	set := &toolSet{tools: make([]Tool, 0, len(tools)), byName: make(map[string]int, len(tools))}
	for _, t := range tools {
		if err := checkTool(t); err != nil {
			panic(fmt.Sprintf("tool.NewRegistry: %v", err))
		}
		if _, dup := set.byName[t.Name]; dup {
			panic(fmt.Sprintf("tool.NewRegistry: duplicate tool name %q", t.Name))
		}
		set.byName[t.Name] = len(set.tools)
		set.tools = append(set.tools, t)
	}
	return set
}

func checkTool(t Tool) error {
	if t.Name == "" {
		return errors.New("a tool has no name")
	}
	if t.run == nil {
		return fmt.Errorf("tool %q has no handler (build it with tool.New)", t.Name)
	}
	for what, schema := range map[string]json.RawMessage{"inputSchema": t.InputSchema, "outputSchema": t.OutputSchema} {
		if schema == nil {
			continue
		}
		if err := CheckSchema(schema); err != nil {
			return fmt.Errorf("tool %q: %s %w", t.Name, what, err)
		}
	}
	return nil
}

// WithLister returns a registry of the same tools whose listed set l chooses per
// call; a nil l lists every tool.
func (r *Registry) WithLister(l Lister) *Registry {
	return &Registry{set: r.set, lister: l, budget: r.budget}
}

// WithBudget returns a registry of the same tools whose calls fit their answers to the budget
// b answers, in characters of an answer's text (a config may set it); nil means
// window.DefaultChars.
func (r *Registry) WithBudget(b func(ctx context.Context) int) *Registry {
	return &Registry{set: r.set, lister: r.lister, budget: b}
}

// List returns the tools available now, in registration order. The slice is the
// caller's to keep; the Tools in it share their schemas with the registry.
func (r *Registry) List(ctx context.Context) []Tool {
	all := r.all()
	if r.lister == nil {
		return all
	}
	return r.lister(ctx, all)
}

// all is a copy of every tool, each with the registry's budget.
func (r *Registry) all() []Tool {
	all := append([]Tool(nil), r.set().tools...)
	for i := range all {
		all[i].budget = r.budget
	}
	return all
}

// Lookup returns the tool called name if it is available now.
func (r *Registry) Lookup(ctx context.Context, name string) (Tool, bool) {
	set := r.set()
	i, ok := set.byName[name]
	if !ok {
		return Tool{}, false
	}
	if r.lister == nil {
		t := set.tools[i]
		t.budget = r.budget
		return t, true
	}
	for _, t := range r.lister(ctx, r.all()) {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}
