package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/taskenv"
	"github.com/vzn/vx/proc/sandbox"
)

// nothingEnforced is the verdict of a host without Landlock or namespaces: the runner then only
// compares the project before and after, which these tests exercise on any host.
func nothingEnforced() sandbox.Verdict {
	return sandbox.Verdict{OS: "test", NotEnforced: []string{"filesystem: not on this test host", "network: not on this test host"}}
}

func unenforced(o *Options) { o.Sandbox.Verdict = nothingEnforced }

func violationsOf(t *testing.T, f *fixture, ids []string, mod func(*Options)) (map[string][]string, map[string]string, string) {
	t.Helper()
	s, out := f.run(ids, mod)
	v, st := map[string][]string{}, map[string]string{}
	for _, task := range s.Tasks {
		v[task.TaskID], st[task.TaskID] = task.SandboxViolations, string(task.Status)
	}
	return v, st, out
}

func TestSandboxRequiredIsRefused(t *testing.T) {
	f := newFixture(t)
	app := f.project("app")
	f.task(app, "build", "echo ran > ran.txt", func(t *graph.Task) { t.Sandbox = &graph.Sandbox{Required: true} })
	_, st, out := violationsOf(t, f, []string{"app#build"}, unenforced)
	if st["app#build"] != "failed" || !strings.Contains(out, "its sandbox is required, and this host cannot enforce it: filesystem: not on this test host") {
		t.Errorf("status %q, output:\n%s", st["app#build"], out)
	}
	if _, err := os.Stat(filepath.Join(app.AbsDir, "ran.txt")); err == nil {
		t.Errorf("a refused task ran")
	}
}

func TestSandboxWarnsAndCompares(t *testing.T) {
	f := newFixture(t)
	app := f.project("app")
	f.task(app, "build", "mkdir -p dist && echo js > dist/a.js && echo map > dist/a.map && echo stray > stray.txt", func(t *graph.Task) {
		t.Sandbox, t.Outputs = &graph.Sandbox{}, []string{"dist/*.js"}
	})
	f.task(app, "tidy", "mkdir -p dist && echo js > dist/b.js && rm -f old.txt", func(t *graph.Task) {
		t.Sandbox, t.Outputs = &graph.Sandbox{}, []string{"dist/*.js"}
	})
	f.write("packages/app/old.txt", "old")
	v, st, out := violationsOf(t, f, []string{"app#build"}, unenforced)
	if !strings.Contains(out, "app#build | vx: sandbox not enforced: filesystem: not on this test host") {
		t.Errorf("no warning:\n%s", out)
	}
	want := []string{"packages/app/dist/a.map: created outside the task's outputs", "packages/app/stray.txt: created outside the task's outputs"}
	if st["app#build"] != "failed" || !slices.Equal(v["app#build"], want) {
		t.Errorf("build: %s %q, want failed %q\n%s", st["app#build"], v["app#build"], want, out)
	}
	// Never cached: it runs again.
	if _, st, _ := violationsOf(t, f, []string{"app#build"}, unenforced); st["app#build"] != "failed" {
		t.Errorf("second run: %s, want failed again (not a hit)", st["app#build"])
	}
	v, _, _ = violationsOf(t, f, []string{"app#tidy"}, unenforced)
	if !slices.Equal(v["app#tidy"], []string{"packages/app/old.txt: removed outside the task's outputs"}) {
		t.Errorf("tidy: %q", v["app#tidy"])
	}
}

// Two tasks of one project at once: each writes only what it may, and neither is blamed for the
// other's outputs. Beside an unsandboxed task nothing is compared.
func TestSandboxTasksBesideEachOther(t *testing.T) {
	f := newFixture(t)
	app := f.project("app")
	// Each waits for the other to have started, so that they surely overlap.
	both := func(me, other, out string) string {
		return "mkdir -p " + out + " && touch " + me + ".started && i=0; while [ ! -e " + other + ".started ] && [ $i -lt 200 ]; do sleep 0.01; i=$((i+1)); done; echo x > " + out + "/f.txt"
	}
	f.task(app, "a", both("a", "b", "out-a"), func(t *graph.Task) {
		t.Sandbox, t.Outputs, t.Cache = &graph.Sandbox{Write: []string{"*.started"}}, []string{"out-a/**"}, false
	})
	f.task(app, "b", both("b", "a", "out-b"), func(t *graph.Task) {
		t.Sandbox, t.Outputs, t.Cache = &graph.Sandbox{Write: []string{"*.started"}}, []string{"out-b/**"}, false
	})
	v, st, out := violationsOf(t, f, []string{"app#a", "app#b"}, unenforced)
	if st["app#a"] != "miss" || st["app#b"] != "miss" || len(v["app#a"])+len(v["app#b"]) > 0 {
		t.Errorf("a %s %q, b %s %q\n%s", st["app#a"], v["app#a"], st["app#b"], v["app#b"], out)
	}
	os.Remove(filepath.Join(app.AbsDir, "a.started"))
	os.Remove(filepath.Join(app.AbsDir, "b.started"))
	f.task(app, "b", both("b", "a", "elsewhere"), func(t *graph.Task) { t.Cache = false }) // unsandboxed now
	v, st, out = violationsOf(t, f, []string{"app#a", "app#b"}, unenforced)
	if st["app#a"] != "miss" || len(v["app#a"]) > 0 {
		t.Errorf("a beside an unsandboxed b: %s %q\n%s", st["app#a"], v["app#a"], out)
	}
}

// A failed task's output names the paths it was denied; one that passed is not failed for it.
func TestSandboxDeniedFromOutput(t *testing.T) {
	f := newFixture(t)
	app := f.project("app")
	f.task(app, "node", `echo "Error: EACCES: permission denied, open '../elsewhere.txt'"; exit 1`, func(t *graph.Task) {
		t.Sandbox, t.Cache = &graph.Sandbox{}, false
	})
	f.task(app, "fine", `echo "Error: EACCES: permission denied, open '../elsewhere.txt'"`, func(t *graph.Task) {
		t.Sandbox, t.Cache = &graph.Sandbox{}, false
	})
	v, st, _ := violationsOf(t, f, []string{"app#node", "app#fine"}, unenforced)
	if st["app#node"] != "failed" || !slices.Equal(v["app#node"], []string{"packages/elsewhere.txt: write denied by the sandbox"}) {
		t.Errorf("node: %s %q", st["app#node"], v["app#node"])
	}
	if st["app#fine"] != "miss" || len(v["app#fine"]) > 0 {
		t.Errorf("fine: %s %q", st["app#fine"], v["app#fine"])
	}
}

// An agent's run confines every task, and its key is not the declared run's.
func TestSandboxAgentNarrowsAndKeys(t *testing.T) {
	f := newFixture(t)
	app := f.project("app")
	f.task(app, "build", "echo x > reach.txt", func(t *graph.Task) {
		t.Sandbox = &graph.Sandbox{Network: true, Write: []string{"//**"}}
	})
	s1, _ := f.run([]string{"app#build"}, unenforced)
	agent := func(o *Options) { unenforced(o); o.Sandbox.Agent = true }
	s2, out := f.run([]string{"app#build"}, agent)
	if s1.Tasks[0].Status != "miss" || s2.Tasks[0].Status != "failed" {
		t.Errorf("declared run %s, agent's run %s (want miss, failed)\n%s", s1.Tasks[0].Status, s2.Tasks[0].Status, out)
	}
	if s1.Tasks[0].Hash == s2.Tasks[0].Hash {
		t.Errorf("the agent's run has the declared run's key")
	}
	boxes := taskenv.NewSandboxes(f.ws, taskenv.SandboxOptions{Agent: true}, nil)
	if eff := boxes.Effective(app.Tasks["build"]); eff.Network || len(eff.Write) > 0 {
		t.Errorf("agent's sandbox %+v, want no network and no write globs", eff)
	}
}

// A task of a project whose folder holds this one's (the workspace's root project) may write in
// it: while one without a sandbox runs, the nested project's task is not blamed for its files.
func TestSandboxBesideAnEnclosingProject(t *testing.T) {
	f := newFixture(t)
	app := f.project("app")
	root := &graph.Project{Name: "root", Dir: ".", AbsDir: f.root, Tasks: map[string]*graph.Task{}}
	f.ws.Projects = append(f.ws.Projects, root)
	wait := func(other string) string {
		return "i=0; while [ ! -e " + other + " ] && [ $i -lt 200 ]; do sleep 0.01; i=$((i+1)); done; "
	}
	f.task(root, "scribble", "touch root.started && "+wait("packages/app/app.started")+"echo x > packages/app/scribble.txt", func(t *graph.Task) {
		t.Cache = false
	})
	f.task(app, "build", "touch app.started && "+wait("../../root.started")+"sleep 0.2", func(t *graph.Task) {
		t.Sandbox, t.Cache = &graph.Sandbox{Write: []string{"*.started"}}, false
	})
	v, st, out := violationsOf(t, f, []string{"root#scribble", "app#build"}, unenforced)
	if st["app#build"] != "miss" || len(v["app#build"]) > 0 {
		t.Errorf("app#build beside root#scribble: %s %q\n%s", st["app#build"], v["app#build"], out)
	}
}
