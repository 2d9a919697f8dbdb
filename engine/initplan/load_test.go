package initplan

import (
	"context"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/vzn/vx/engine/workspace"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestInitPlansLoad writes each fixture's plan and loads it as vx does: the config is valid, and every
// project resolves to exactly the tasks the plan says (the templates reach who they should, ifScript
// and the root project included).
func TestInitPlansLoad(t *testing.T) {
	for _, name := range []string{"turbo-starter", "turbo-kitchen-sink", "nx-integrated", "nx-acme", "plain-scripts"} {
		t.Run(name, func(t *testing.T) {
			dir := fixture(t, name)
			p, err := Init(Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			ws, err := workspace.NewLoader(workspace.Options{Dir: dir, Getenv: func(string) string { return "" }}).Load(context.Background())
			if err != nil {
				t.Fatalf("the written config does not load: %v", err)
			}
			if len(ws.Projects) != len(p.Projects) {
				t.Errorf("%d projects loaded, %d planned", len(ws.Projects), len(p.Projects))
			}
			for _, pp := range p.Projects {
				got, ok := ws.Project(pp.Name)
				if !ok {
					t.Errorf("project %s (%s) did not load", pp.Name, pp.Dir)
					continue
				}
				if got.Dir != pp.Dir || !slices.Equal(got.TaskNames(), pp.Tasks) {
					t.Errorf("%s: loaded %s %v, planned %s %v", pp.Name, got.Dir, got.TaskNames(), pp.Dir, pp.Tasks)
				}
			}
		})
	}
}
