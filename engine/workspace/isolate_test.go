package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/vxerr"
	"github.com/vzn/vx/internal/testkit"
)

// isolation starts this test binary (see TestMain) as the evaluation child.
func isolation(t testing.TB) *Isolation {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &Isolation{Path: exe}
}

// A workspace evaluated in a child process resolves as it does in process: plugin stages, which
// run config JavaScript after the configs, included; what the config prints reaches the console.
func TestIsolatedLoadMatchesInProcess(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"vx.workspace.ts": `
console.log('evaluating the workspace')
const wrap = { name: 'wrap', stage(tasks: Record<string, any>) {
  for (const t of Object.values(tasks)) t.command = 'time ' + t.command
  return tasks
} }
export default { projects: ['a', 'b'], plugins: [wrap], tasks: { build: { command: 'make', inputs: [] } } }
`,
		"a/.keep":         "",
		"b/vx.project.ts": "export default { name: 'bee', tasks: { test: { command: 'go test', dependsOn: ['build'] } } }\n",
	})
	ctx := context.Background()
	var console bytes.Buffer
	iso, err := NewLoader(Options{Dir: root, Isolate: isolation(t), Console: &console}).Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	in, err := NewLoader(Options{Dir: root}).Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(iso)
	want, _ := json.Marshal(in)
	if !bytes.Equal(got, want) {
		t.Errorf("isolated workspace differs from the in-process one:\n%s\n%s", got, want)
	}
	if b, ok := iso.Task("a#build"); !ok || b.Command != "time make" || b.Inputs == nil {
		t.Errorf("a#build = %+v, want the stage's command and the empty inputs kept", b)
	}
	if _, ok := iso.Task("bee#test"); !ok {
		t.Errorf("bee#test missing: %v", iso.TaskIDs())
	}
	if !strings.Contains(console.String(), "evaluating the workspace") {
		t.Errorf("console = %q, want the config's console.log", console.String())
	}
}

// A config that throws answers its own error at its TypeScript position through the child.
func TestIsolatedConfigErrorKeepsItsPosition(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"vx.workspace.ts": "export default { projects: ['a'] }\n",
		"a/vx.project.ts": "const x = 1\nthrow new Error('no good')\nexport default {}\n",
	})
	l := NewLoader(Options{Dir: root, Isolate: isolation(t)})
	_, err := l.Load(context.Background())
	var ce *vxerr.ConfigError
	if !errors.As(err, &ce) || err.Error() != "a/vx.project.ts:2:7: Error: no good" {
		t.Fatalf("err = %v, want the throw at a/vx.project.ts:2:7", err)
	}
	ws, failed, err := l.LoadPartial(context.Background())
	if err != nil || len(failed) != 1 || len(ws.Projects) != 0 {
		t.Errorf("LoadPartial = %v, %v, %v; want the workspace without a and a's error", ws, failed, err)
	}
}

// The attacks of issue 37: native code of the runtime that neither checks for interrupts nor
// allocates where a sampler sees it. Each ends in one error naming a limit.
var limitAttacks = map[string]string{
	"stringify": "let a: any = [1]\nfor (let i = 0; i < 40; i++) a = [a, a]\nconst s = JSON.stringify(a)\nexport default { projects: [s] }\n",
	"flat":      "let a: any = [1]\nfor (let i = 0; i < 40; i++) a = [a, a]\nexport default { projects: a.flat(Infinity) }\n",
	"arrayFrom": "export default { projects: Array.from({ length: 2 ** 26 }) }\n",
}

// A step that runs on in native code is stopped by the parent at its deadline, and the error
// names the limit and the file; the loader then loads the fixed file.
func TestIsolatedStepDeadlineStopsNativeCode(t *testing.T) {
	for name, src := range limitAttacks {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, map[string]string{"vx.workspace.ts": src})
			iso := isolation(t)
			iso.Timeout = time.Second
			l := NewLoader(Options{Dir: root, Isolate: iso})
			_, err := l.Load(context.Background())
			if err == nil || (err.Error() != "vx.workspace.ts: config evaluation ran longer than 1s and was stopped" &&
				!strings.Contains(err.Error(), "memory")) {
				t.Fatalf("err = %v, want the 1s limit (or the memory bound) named", err)
			}
			writeTree(t, root, map[string]string{"vx.workspace.ts": "export default { projects: [] }\n"})
			if _, err := l.Load(context.Background()); err != nil {
				t.Errorf("after the fix: %v", err)
			}
		})
	}
}

// A child that passes the memory bound is stopped by the kernel — by its memory cgroup where one
// can be made and joined, else by its RLIMIT_AS — and the error names the bound.
func TestIsolatedMemoryBoundStopsTheChild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the kernel's bounds are Linux's")
	}
	src := "const big = Array.from({ length: 2 ** 25 })\nexport default { projects: [] }\n"
	for _, way := range []string{"cgroup", "rlimit", "unjoinable"} {
		noCgroup := way != "cgroup"
		t.Run(way, func(t *testing.T) {
			if !noCgroup {
				if cg := newMemoryCgroup(1 << 30); cg == nil {
					t.Skip("no memory cgroup can be made here")
				} else {
					cg.remove()
				}
			}
			if noCgroup && raceEnabled {
				t.Skip("a race-enabled child cannot run under RLIMIT_AS")
			}
			root := testkit.TempTree(t, map[string]string{"vx.workspace.ts": src})
			iso := isolation(t)
			iso.MemoryLimit, iso.Timeout, iso.noCgroup, iso.unjoinable = 256<<20, time.Minute, noCgroup, way == "unjoinable"
			_, err := NewLoader(Options{Dir: root, Isolate: iso}).Load(context.Background())
			if err == nil || err.Error() != "vx.workspace.ts: config evaluation used more than 256 MiB and was stopped" {
				t.Fatalf("err = %v, want the 256 MiB bound named", err)
			}
			t.Log(err)
		})
	}
}

// BenchmarkColdLoad compares a cold load (no state folder, so nothing kept) in a child process
// with one in process, on a workspace of a workspace config, twenty project configs and a plugin
// stage. The figures are in docs/performance.md.
func BenchmarkColdLoad(b *testing.B) {
	files := map[string]string{
		"vx.workspace.ts": "const tag = { name: 'tag', stage(tasks: Record<string, any>) { return tasks } }\n" +
			"export default { projects: ['p/*'], plugins: [tag], tasks: { build: { command: 'make', dependsOn: ['^build'] }, test: { command: 'make test', dependsOn: ['build'] } } }\n",
	}
	for i := range 20 {
		files[fmt.Sprintf("p/p%02d/vx.project.ts", i)] = fmt.Sprintf("export default { name: 'p%02d', tags: ['lib'], tasks: { lint: { command: 'eslint .' } } }\n", i)
	}
	root := testkit.TempTree(b, files)
	for _, mode := range []string{"in-process", "child"} {
		b.Run(mode, func(b *testing.B) {
			var iso *Isolation
			if mode == "child" {
				iso = isolation(b)
			}
			for b.Loop() {
				if _, err := NewLoader(Options{Dir: root, Isolate: iso}).Load(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A warm start answers from resolved.gob and starts no child: a loader whose child cannot even be
// started loads the workspace a first loader kept.
func TestIsolatedWarmStartStartsNoChild(t *testing.T) {
	root := testkit.TempTree(t, map[string]string{
		"vx.workspace.ts": "export default { projects: ['a'], tasks: { build: { command: 'make' } } }\n",
		"a/.keep":         "",
		".vx/.keep":       "",
	})
	ctx := context.Background()
	if _, err := NewLoader(Options{Dir: root, Isolate: isolation(t)}).Load(ctx); err != nil {
		t.Fatal(err)
	}
	broken := &Isolation{Path: "/nonexistent/vx"}
	ws, err := NewLoader(Options{Dir: root, Isolate: broken}).Load(ctx)
	if err != nil {
		t.Fatalf("warm start: %v, want the kept workspace without a child", err)
	}
	if _, ok := ws.Task("a#build"); !ok {
		t.Errorf("warm start: tasks %v", ws.TaskIDs())
	}
	testkit.WriteTree(t, root, map[string]string{"vx.workspace.ts": "export default { projects: ['a'] }\n"})
	if _, err := NewLoader(Options{Dir: root, Isolate: broken}).Load(ctx); err == nil {
		t.Error("an edited config loaded without evaluating it")
	}
}

// The parent kills a child whose step outlasts its time, but gives the search for project folders
// (vx's own work over the workspace's folders) many steps' time.
func TestStepDeadlineSparesDiscovery(t *testing.T) {
	watch := func(perStep time.Duration, write func(w *os.File, killed <-chan struct{})) *evalChild {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		ch := &evalChild{iso: &Isolation{}}
		killed := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			ch.watchSteps(r, perStep, func() { close(killed) })
		}()
		write(w, killed)
		w.Close()
		<-done
		r.Close()
		return ch
	}
	ch := watch(time.Second, func(w *os.File, _ <-chan struct{}) {
		w.WriteString("vx.workspace.ts\n" + discoveryMark + "\n")
		time.Sleep(2 * time.Second) // longer than a step, far shorter than discovery's bound
		w.WriteString("vx.workspace.ts\n")
	})
	if ch.overran {
		t.Error("a search for project folders longer than one step was stopped")
	}
	ch = watch(100*time.Millisecond, func(w *os.File, killed <-chan struct{}) {
		w.WriteString("a/vx.project.ts\n")
		<-killed
	})
	if !ch.overran || ch.overranDiscovery || ch.lastStep != "a/vx.project.ts" {
		t.Errorf("a silent step: overran %v, discovery %v, step %q; want the step's file stopped", ch.overran, ch.overranDiscovery, ch.lastStep)
	}
}

// A workspace loaded before its state folder existed is kept once a run has made the folder: the
// next process reads it back and starts no child, where without Keep it evaluated again.
func TestKeepAfterTheStateFolderIsMade(t *testing.T) {
	root := testkit.TempTree(t, map[string]string{
		"vx.workspace.ts":  "export default { projects: ['packages/*'], tasks: { build: { command: 'make' } } }\n",
		"packages/a/.keep": "",
	})
	ctx := context.Background()
	first := NewLoader(Options{Dir: root, Isolate: isolation(t)})
	if _, err := first.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ".vx")); !os.IsNotExist(err) {
		t.Fatalf("loading made the state folder: %v", err)
	}
	if err := os.Mkdir(filepath.Join(root, ".vx"), 0o755); err != nil { // as a run makes it
		t.Fatal(err)
	}
	first.Keep()
	if _, err := os.Stat(filepath.Join(root, ".vx", "config", "resolved.gob")); err != nil {
		t.Fatalf("Keep wrote nothing: %v", err)
	}
	ws, err := NewLoader(Options{Dir: root, Isolate: &Isolation{Path: "/nonexistent/vx"}}).Load(ctx)
	if err != nil {
		t.Fatalf("the next process: %v, want the kept workspace without a child", err)
	}
	if _, ok := ws.Task("a#build"); !ok {
		t.Errorf("the kept workspace's tasks: %v", ws.TaskIDs())
	}
}
