package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vzn/vx/internal/testkit"
)

// worktreeRun is what a test reads of a run's summary.
type worktreeRun struct {
	OK    bool `json:"ok"`
	Tasks []struct {
		TaskID      string  `json:"taskId"`
		Status      string  `json:"status"`
		CacheSource *string `json:"cacheSource"`
	} `json:"tasks"`
}

// runIn runs vx with args in dir under the cache home cache, and answers its stdout.
func runIn(t *testing.T, dir, cache string, args ...string) []byte {
	t.Helper()
	cmd := vxCommand(t, dir, args...)
	cmd.Env = append(cmd.Env, "XDG_CACHE_HOME="+cache)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("vx %v in %s: %v\n%s", args, dir, err, stderr.String())
	}
	return out
}

// A build in one `git worktree add` checkout, then the same build in another, is all hits there:
// the second restores the first one's outputs byte for byte from the store both share (the tasks
// write what no second run would write again: their process id and a random number), says whose
// entry each hit restored (cacheSource), runs no command (counted from the commands' own side
// effect), and keeps its own history. A clone of the repository shares nothing.
func TestWorktreesShareTheStore(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	counter := filepath.Join(t.TempDir(), "commands")
	build := `mkdir -p dist && echo "$$ $(od -An -N8 -tx1 /dev/urandom)" > dist/out.txt && echo ran >> ` + counter
	a := testkit.TempRepo(t, map[string]string{
		"vx.workspace.ts": "import { mcp } from '@vzn/vx-mcp'\n" +
			`export default { projects: ['packages/*'], plugins: [mcp({ run: true })], tasks: { build: { command: '` + build + `', dependsOn: ['^build'], outputs: ['dist/**'] } } }` + "\n",
		"packages/lib/package.json": `{ "name": "lib" }`,
		"packages/app/package.json": `{ "name": "app", "dependencies": { "lib": "*" } }`,
		".gitignore":                "dist/\n.vx/\n",
	})
	b := filepath.Join(t.TempDir(), "b")
	if out, err := exec.Command("git", "-C", a, "worktree", "add", "-q", b).CombinedOutput(); err != nil {
		t.Fatalf("git worktree add: %v\n%s", err, out)
	}
	cache := t.TempDir()

	var runA, runB worktreeRun
	if err := json.Unmarshal(runIn(t, a, cache, "run", "build", "--format", "json"), &runA); err != nil || !runA.OK {
		t.Fatalf("run in A: %+v %v", runA, err)
	}
	if err := json.Unmarshal(runIn(t, b, cache, "run", "build", "--format", "json"), &runB); err != nil || !runB.OK {
		t.Fatalf("run in B: %+v %v", runB, err)
	}
	if len(runB.Tasks) != 2 {
		t.Fatalf("B ran %d tasks, want 2", len(runB.Tasks))
	}
	for _, task := range runB.Tasks {
		if task.Status != "hit" || task.CacheSource == nil || *task.CacheSource != "shared:"+a {
			t.Errorf("B's %s: %s from %v, want a hit from shared:%s", task.TaskID, task.Status, task.CacheSource, a)
		}
	}
	for _, p := range []string{"packages/lib/dist/out.txt", "packages/app/dist/out.txt"} {
		wa, errA := os.ReadFile(filepath.Join(a, p))
		wb, errB := os.ReadFile(filepath.Join(b, p))
		if errA != nil || errB != nil || !bytes.Equal(wa, wb) {
			t.Errorf("%s: A %q (%v), B %q (%v), want the same bytes", p, wa, errA, wb, errB)
		}
	}
	if ran, _ := os.ReadFile(counter); strings.Count(string(ran), "ran") != 2 {
		t.Errorf("the commands ran %d times in both worktrees, want 2 (A's only)", strings.Count(string(ran), "ran"))
	}

	// One shared store, by default under the cache home; each checkout's history its own.
	var infoA, infoB struct {
		Cache struct {
			Value struct {
				Dir, SharedDir, SharedDirSource string
			} `json:"value"`
		} `json:"cache"`
	}
	json.Unmarshal(runIn(t, a, cache, "info", "--format", "json"), &infoA)
	json.Unmarshal(runIn(t, b, cache, "info", "--format", "json"), &infoB)
	if infoA.Cache.Value.SharedDir != infoB.Cache.Value.SharedDir || !strings.HasPrefix(infoA.Cache.Value.SharedDir, filepath.Join(cache, "vx")+string(filepath.Separator)) ||
		infoA.Cache.Value.SharedDirSource != "default" || infoB.Cache.Value.Dir != filepath.Join(b, ".vx") {
		t.Errorf("info: A %+v, B %+v", infoA.Cache.Value, infoB.Cache.Value)
	}
	var last []struct {
		RunID string `json:"runId"`
	}
	if err := json.Unmarshal(runIn(t, b, cache, "last", "--list", "--format", "json"), &last); err != nil || len(last) != 1 {
		t.Errorf("B's history: %+v %v, want its one run", last, err)
	}

	mcpSideBySide(t, a, cache, counter)

	// A clone has a repository of its own, and so a store of its own.
	c := filepath.Join(t.TempDir(), "c")
	if out, err := exec.Command("git", "clone", "-q", a, c).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	var runC worktreeRun
	if err := json.Unmarshal(runIn(t, c, cache, "run", "build", "--format", "json"), &runC); err != nil || !runC.OK {
		t.Fatalf("run in the clone: %+v %v", runC, err)
	}
	for _, task := range runC.Tasks {
		if task.Status != "miss" {
			t.Errorf("the clone's %s: %s, want a miss", task.TaskID, task.Status)
		}
	}
}

// mcpSideBySide starts vx mcp servers in the worktree a and in a new worktree of it at once: a
// runTasks in the new one is all hits from a's entries (no command runs), and each server's
// answers name the one shared store, and each its own checkout's history.
func mcpSideBySide(t *testing.T, a, cache, counter string) {
	c := filepath.Join(t.TempDir(), "c")
	if out, err := exec.Command("git", "-C", a, "worktree", "add", "-q", c).CombinedOutput(); err != nil {
		t.Fatalf("git worktree add: %v\n%s", err, out)
	}
	inA, inC := mcpSession(t, a, "XDG_CACHE_HOME="+cache), mcpSession(t, c, "XDG_CACHE_HOME="+cache)
	var answered struct {
		Summary worktreeRun `json:"summary"`
	}
	js, text, isErr := call(t, inC, "runTasks", map[string]any{"tasks": []string{"build"}})
	if err := json.Unmarshal(js, &answered); err != nil || isErr || len(answered.Summary.Tasks) != 2 {
		t.Fatalf("runTasks in C: %s", text)
	}
	for _, task := range answered.Summary.Tasks {
		if task.Status != "hit" || task.CacheSource == nil || *task.CacheSource != "shared:"+a {
			t.Errorf("C's %s through vx mcp: %s from %v, want a hit from shared:%s", task.TaskID, task.Status, task.CacheSource, a)
		}
	}
	if ran, _ := os.ReadFile(counter); strings.Count(string(ran), "ran") != 2 {
		t.Errorf("the commands ran %d times, want 2 (A's only)", strings.Count(string(ran), "ran"))
	}
	type answer struct {
		Entries int    `json:"entries"`
		Store   string `json:"store"`
	}
	var statsA, statsC, historyC answer
	js, _, _ = call(t, inA, "getCacheStats", map[string]any{})
	json.Unmarshal(js, &statsA)
	js, _, _ = call(t, inC, "getCacheStats", map[string]any{})
	json.Unmarshal(js, &statsC)
	if !strings.HasPrefix(statsA.Store, "shared:") || statsA.Store != statsC.Store || statsA.Entries != 2 || statsC.Entries != 2 {
		t.Errorf("getCacheStats: A %+v, C %+v, want one shared store of 2 entries", statsA, statsC)
	}
	js, _, _ = call(t, inC, "getRunHistory", map[string]any{})
	json.Unmarshal(js, &historyC)
	if historyC.Store != "checkout:"+filepath.Join(c, ".vx") {
		t.Errorf("getRunHistory in C names %+v, want C's own .vx", historyC.Store)
	}
}
