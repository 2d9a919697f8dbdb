package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func nop(context.Context, *Call, json.RawMessage) (any, error) { return nil, nil }

// named is a tool called name answering nothing, with the schemas given.
func named(name string, in, out json.RawMessage) Tool {
	return New(Tool{Name: name, InputSchema: in, OutputSchema: out}, nop)
}

func names(ts []Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func TestRegistryListLookup(t *testing.T) {
	ctx := context.Background()
	r := NewRegistry(
		named("listTasks", nil, nil),
		named("runTasks", nil, nil),
		named("getConfig", json.RawMessage(`{"type":"object"}`), nil),
	)
	if got, want := names(r.List(ctx)), []string{"listTasks", "runTasks", "getConfig"}; !slices.Equal(got, want) {
		t.Fatalf("List = %v, want %v", got, want)
	}
	if _, ok := r.Lookup(ctx, "runTasks"); !ok {
		t.Fatal("Lookup(runTasks) not found")
	}
	if _, ok := r.Lookup(ctx, "nope"); ok {
		t.Fatal("Lookup(nope) found")
	}

	// A Lister hides runTasks (mcp({ run: false })): neither listed nor callable.
	type key struct{}
	noRun := r.WithLister(func(ctx context.Context, all []Tool) []Tool {
		if ctx.Value(key{}) == nil {
			return all
		}
		return slices.DeleteFunc(all, func(t Tool) bool { return t.Name == "runTasks" })
	})
	hidden := context.WithValue(ctx, key{}, true)
	if got, want := names(noRun.List(hidden)), []string{"listTasks", "getConfig"}; !slices.Equal(got, want) {
		t.Fatalf("List with lister = %v, want %v", got, want)
	}
	if _, ok := noRun.Lookup(hidden, "runTasks"); ok {
		t.Fatal("Lookup(runTasks) found a tool the lister hides")
	}
	if _, ok := noRun.Lookup(ctx, "runTasks"); !ok {
		t.Fatal("Lookup(runTasks) not found when the lister lists it")
	}
	// The lister's edits never reach the registry's own slice.
	if got := names(r.List(ctx)); len(got) != 3 {
		t.Fatalf("registry changed by a lister: %v", got)
	}
}

func TestNewRegistryPanics(t *testing.T) {
	for name, tools := range map[string][]Tool{
		"empty name":     {named("", nil, nil)},
		"no handler":     {{Name: "a"}},
		"duplicate":      {named("a", nil, nil), named("a", nil, nil)},
		"schema":         {named("a", json.RawMessage(`[]`), nil)},
		"invalid schema": {named("a", nil, json.RawMessage(`{`))},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: NewRegistry did not panic", name)
				}
			}()
			NewRegistry(tools...)
		}()
	}
}

func TestRefusal(t *testing.T) {
	err := fmt.Errorf("getTaskLog: %w", Refusef("argument %q must be a non-empty string", "runId"))
	var r *Refusal
	if !errors.As(err, &r) || r.Msg != `argument "runId" must be a non-empty string` {
		t.Fatalf("errors.As = %v", r)
	}
	if !IsRefusal(err) || IsRefusal(errors.New("x")) {
		t.Fatal("IsRefusal wrong")
	}
}

// A schema outside the portable subset (a type array, oneOf, $ref) is refused when the registry
// is built, so no tool can list one.
func TestRegistryRefusesUnportableSchemas(t *testing.T) {
	for _, bad := range []string{
		`{"type":"object","properties":{"n":{"type":["integer","null"]}}}`,
		`{"type":"object","properties":{"a":{"oneOf":[{"type":"string"},{"type":"boolean"}]}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}}}`,
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "not every client accepts") {
					t.Errorf("schema %s: recovered %v, want a refusal", bad, r)
				}
			}()
			NewRegistry(named("x", nil, json.RawMessage(bad)))
		}()
	}
}
