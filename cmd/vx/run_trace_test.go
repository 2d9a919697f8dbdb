package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/chrometrace"
	"github.com/vzn/vx/engine/summary"
)

// profileWorkspace has n projects of three tasks each (build after its dependencies' builds,
// test after build, lint alone): p0001's build fails, so that its test is blocked.
func profileWorkspace(t *testing.T, n int) string {
	t.Helper()
	files := map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({
  projects: ['packages/*'],
  tasks: {
    build: { command: 'sh build.sh', dependsOn: ['^build'], inputs: ['src/**'], outputs: ['dist/**'] },
    test: { command: 'true', dependsOn: ['build'] },
    lint: { command: 'true', inputs: ['src/**'] },
  },
})
`,
		".gitignore": ".vx/\ndist/\n",
	}
	for i := range n {
		name := fmt.Sprintf("p%04d", i)
		deps := ""
		if i > 0 {
			deps = fmt.Sprintf(`, "dependencies": {"p%04d": "*"}`, i/3)
		}
		files["packages/"+name+"/package.json"] = fmt.Sprintf(`{"name": %q%s}`, name, deps)
		files["packages/"+name+"/src/index.js"] = fmt.Sprintf("export const n = %d\n", i)
		build := "mkdir -p dist && cp src/index.js dist/\n"
		if i == 1 {
			build = "echo broken >&2; exit 3\n"
		}
		files["packages/"+name+"/build.sh"] = build
	}
	dir := writeWorkspace(t, files)
	gitCommitAll(t, dir)
	return dir
}

// vx run --profile writes a trace-event file: one complete event per task of the summary, whose
// duration is the summary's durationMs (within the millisecond it is rounded to), its status, cache
// source and key as args; every phase nested where it belongs; lanes no more than the workers;
// counters that end at zero. A run of 300 tasks makes a file under 5 MB.
func TestRunProfile(t *testing.T) {
	t.Parallel()
	dir := profileWorkspace(t, 100)
	for _, pass := range []string{"misses", "hits"} {
		profile := filepath.Join(t.TempDir(), "profile.json")
		cmd := vxCommand(t, dir, "run", "--all", "--concurrency", "4", "--profile="+profile, "--format", "json")
		out, err := cmd.Output()
		if code := cmd.ProcessState.ExitCode(); code != 1 {
			t.Fatalf("%s: vx run: exit %d (%v), want 1 (p0001#build fails)", pass, code, err)
		}
		var sum summary.Summary
		if err := json.Unmarshal(out, &sum); err != nil {
			t.Fatalf("%s: summary: %v", pass, err)
		}
		if len(sum.Tasks) != 300 {
			t.Fatalf("%s: %d tasks in the summary, want 300", pass, len(sum.Tasks))
		}
		data, err := os.ReadFile(profile)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: a profile of %d tasks is %d bytes", pass, len(sum.Tasks), len(data))
		if len(data) >= 5<<20 {
			t.Errorf("%s: the profile of 300 tasks is %d bytes, not under 5 MB", pass, len(data))
		}
		checkProfile(t, pass, data, &sum, 4)
	}
}

func checkProfile(t *testing.T, pass string, data []byte, sum *summary.Summary, workers int) {
	t.Helper()
	var tr chrometrace.Trace
	if err := json.Unmarshal(data, &tr); err != nil {
		t.Fatalf("%s: the profile is not trace-event JSON: %v", pass, err)
	}
	if err := tr.Check(); err != nil {
		t.Errorf("%s: %v", pass, err)
	}
	tasks := map[string]chrometrace.Event{}
	threads := map[int]string{}
	phases := map[string]bool{}
	lastCounter := map[string]float64{}
	for _, e := range tr.TraceEvents {
		switch {
		case e.Ph == "X" && e.Cat == chrometrace.CatTask:
			if _, dup := tasks[e.Name]; dup {
				t.Errorf("%s: two complete events for %s", pass, e.Name)
			}
			tasks[e.Name] = e
		case e.Ph == "X" && e.Cat == chrometrace.CatPhase:
			phases[e.Name] = true
		case e.Ph == "M" && e.Name == "thread_name":
			threads[e.Tid] = e.Args["name"].(string)
		case e.Ph == "C":
			for _, v := range e.Args {
				lastCounter[e.Name] = v.(float64)
			}
		}
	}
	lanes := map[int]bool{}
	for _, task := range sum.Tasks {
		e, ok := tasks[task.TaskID]
		if !ok {
			t.Errorf("%s: no complete event for %s", pass, task.TaskID)
			continue
		}
		if d := math.Abs(float64(*e.Dur)/1000 - float64(task.DurationMs)); d > 1 {
			t.Errorf("%s: %s lasts %d µs in the profile, %d ms in the summary", pass, task.TaskID, *e.Dur, task.DurationMs)
		}
		var source any
		if task.CacheSource != nil {
			source = *task.CacheSource
		}
		if e.Args["status"] != string(task.Status) || e.Args["key"] != task.Hash || e.Args["cacheSource"] != source {
			t.Errorf("%s: %s args %v; the summary says %s, key %s, source %v", pass, task.TaskID, e.Args, task.Status, task.Hash, source)
		}
		if task.Status == "blocked" {
			if !strings.HasPrefix(threads[e.Tid], "not run") {
				t.Errorf("%s: blocked %s is on %q", pass, task.TaskID, threads[e.Tid])
			}
			continue
		}
		if !strings.HasPrefix(threads[e.Tid], "lane ") {
			t.Errorf("%s: %s is on %q, not a lane", pass, task.TaskID, threads[e.Tid])
		}
		lanes[e.Tid] = true
	}
	if len(tasks) != len(sum.Tasks) {
		t.Errorf("%s: %d task events for %d tasks", pass, len(tasks), len(sum.Tasks))
	}
	if len(lanes) == 0 || len(lanes) > workers {
		t.Errorf("%s: %d lanes for %d workers", pass, len(lanes), workers)
	}
	want := []string{"config load", "select", "open index", "read index", "git listing", "hash", "cache lookup", "record run"}
	if pass == "misses" {
		want = append(want, "command", "archive")
	} else {
		want = append(want, "restore")
	}
	for _, name := range want {
		if !phases[name] {
			t.Errorf("%s: no %q phase among %v", pass, name, phases)
		}
	}
	if lastCounter["running tasks"] != 0 || lastCounter["reserved memory"] != 0 {
		t.Errorf("%s: the counters end at %v, want 0", pass, lastCounter)
	}
}
