//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vzn/vx/internal/testkit"
)

// gatedWorkspace is a chain of builds (lib, then mid1 and mid2, then app) whose commands append
// "<project> <pid>" to $COUNT, outside every checkout, as they start: the test counts executions
// from that file, never from vx's summaries. A build then waits until its src.txt's line is in
// $GATE, so that the test holds the first build of a key while the other checkouts reach it.
var gatedWorkspace = map[string]string{
	"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
import { mcp } from '@vzn/vx-mcp'
export default defineWorkspace({
  projects: ['packages/*'],
  plugins: [mcp()],
  passThroughEnv: ['COUNT', 'GATE'],
  tasks: {
    build: {
      command: 'echo "$(basename "$PWD") $$" >> "$COUNT"; until grep -qx "$(cat src.txt)" "$GATE" 2>/dev/null; do sleep 0.05; done; mkdir -p dist; cat src.txt $(cat deps.txt) > dist/out.txt',
      dependsOn: ['^build'], inputs: ['src.txt', 'deps.txt'], outputs: ['dist/**'],
    },
  },
})
`,
	".gitignore":                 ".vx/\ndist/\n",
	"packages/lib/package.json":  `{"name": "lib"}`,
	"packages/lib/src.txt":       "lib-one\n",
	"packages/lib/deps.txt":      "",
	"packages/mid1/package.json": `{"name": "mid1", "dependencies": {"lib": "*"}}`,
	"packages/mid1/src.txt":      "mid1\n",
	"packages/mid1/deps.txt":     "../lib/dist/out.txt\n",
	"packages/mid2/package.json": `{"name": "mid2", "dependencies": {"lib": "*"}}`,
	"packages/mid2/src.txt":      "mid2\n",
	"packages/mid2/deps.txt":     "../lib/dist/out.txt\n",
	"packages/app/package.json":  `{"name": "app", "dependencies": {"mid1": "*", "mid2": "*"}}`,
	"packages/app/src.txt":       "app\n",
	"packages/app/deps.txt":      "../mid1/dist/out.txt ../mid2/dist/out.txt\n",
}

// worktrees makes a repository of files and n-1 more checkouts of it with `git worktree add`,
// and answers the n checkouts.
func worktrees(t *testing.T, files map[string]string, n int) []string {
	t.Helper()
	repo := testkit.TempRepo(t, files)
	dirs := []string{repo}
	base := t.TempDir()
	for i := 2; i <= n; i++ {
		dir := filepath.Join(base, fmt.Sprintf("wt%d", i))
		cmd := exec.Command("git", "worktree", "add", "-q", "--detach", dir)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git worktree add: %v\n%s", err, out)
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

// executions counts the lines of the count file by project.
func executions(t *testing.T, countFile string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(countFile)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	n := map[string]int{}
	for line := range strings.Lines(string(data)) {
		project, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		n[project]++
	}
	return n
}

// addGate appends lines to the gate file: the builds whose src.txt holds one of them go on.
func addGate(t *testing.T, gate string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(gate, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
}

// waitNotices is the progress message of a task waiting for a key: its task, and the owner's pid.
var waitNotice = regexp.MustCompile(`^(\S+): waiting for pid (\d+) in (\S+), which executes its key [0-9a-f]{12} \((\S+)\)$`)

// waitedFor answers, for a session's progress under token, the owner pid each task waited for.
func waitedFor(s *runSession, token string) map[string]int {
	got := map[string]int{}
	for _, p := range s.progress.list() {
		if p.ProgressToken != token {
			continue
		}
		if m := waitNotice.FindStringSubmatch(p.Message); m != nil {
			got[m[1]], _ = strconv.Atoi(m[2])
		}
	}
	return got
}

// until polls cond until it holds, failing the test with what() if 2 minutes pass first, or at
// once when bad() says what went wrong.
func until(t *testing.T, cond func() bool, bad func() string, what func() string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if msg := bad(); msg != "" {
			t.Fatal(msg)
		}
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Four worktrees of one repository, each with its own vx mcp server, run the same build at once
// through runTasks, sharing one cache store (VX_CACHE_DIR): each key is executed once on the
// machine, as the commands' own count says; the three checkouts that reached lib#build while the
// first ran it say, as progress, that they wait for its pid, then restore it; every checkout ends
// with the right outputs. Then a key's owner is killed (kill -9) while another checkout waits for
// it: the waiter takes the key over and runs the task itself.
func TestMCPWorktreesExecuteEachKeyOnce(t *testing.T) {
	t.Parallel()
	dirs := worktrees(t, gatedWorkspace, 4)
	scratch := t.TempDir()
	countFile, gate, store := filepath.Join(scratch, "count"), filepath.Join(scratch, "gate"), filepath.Join(scratch, "store")
	addGate(t, gate, "mid1", "mid2", "app")
	sessions := make([]*runSession, len(dirs))
	for i, dir := range dirs {
		sessions[i] = startRunSession(t, dir, "VX_CACHE_DIR="+store, "COUNT="+countFile, "GATE="+gate)
	}

	answers := make([]runToolAnswer, len(dirs))
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			r, err := callRunTool(ctx, s.cs, "runTasks", map[string]any{"tasks": []string{"build"}}, "cold")
			if err != nil {
				t.Errorf("runTasks in %s: %v", dirs[i], err)
				return
			}
			answers[i] = decodeRunAnswer(t, r)
		})
	}
	// lib#build is held at its gate: the three other checkouts wait for its owner.
	waiters := func() int {
		n := 0
		for _, s := range sessions {
			if _, ok := waitedFor(s, "cold")["lib#build"]; ok {
				n++
			}
		}
		return n
	}
	twice := func() string {
		if n := executions(t, countFile)["lib"]; n > 1 {
			return fmt.Sprintf("lib#build executed %d times at once", n)
		}
		return ""
	}
	until(t, func() bool { return waiters() == 3 }, twice, func() string { return fmt.Sprintf("%d checkouts wait for lib#build, want 3", waiters()) })
	addGate(t, gate, "lib-one")
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if got := executions(t, countFile); fmt.Sprint(got) != "map[app:1 lib:1 mid1:1 mid2:1]" {
		t.Errorf("executions = %v, want each build once", got)
	}
	misses := map[string]int{}
	for i, a := range answers {
		if a.Summary == nil || !a.Summary.OK {
			t.Fatalf("runTasks in %s = %+v, want ok", dirs[i], a)
		}
		for id, status := range a.statuses() {
			if status == "miss" {
				misses[id]++
			} else if status != "hit" {
				t.Errorf("%s in %s: %s", id, dirs[i], status)
			}
		}
	}
	if fmt.Sprint(misses) != "map[app#build:1 lib#build:1 mid1#build:1 mid2#build:1]" {
		t.Errorf("misses across the four checkouts = %v, want one per task", misses)
	}
	for _, dir := range dirs {
		checkOutput(t, dir, "app", "app\nmid1\nlib-one\nmid2\nlib-one\n")
	}

	// A new key for lib: its owner (the vx run child of the first checkout's server) is killed
	// while the second checkout waits for it.
	for _, dir := range dirs[:2] {
		if err := os.WriteFile(filepath.Join(dir, "packages/lib/src.txt"), []byte("lib-two\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ownerDone := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		_, err := callRunTool(ctx, sessions[0].cs, "runTasks", map[string]any{"tasks": []string{"lib#build"}}, "owner")
		ownerDone <- err
	}()
	until(t, func() bool { return executions(t, countFile)["lib"] == 2 }, func() string { return "" },
		func() string { return "the first checkout's lib#build did not start" })
	waiterDone := make(chan runToolAnswer, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		r, err := callRunTool(ctx, sessions[1].cs, "runTasks", map[string]any{"tasks": []string{"build"}}, "waiter")
		if err != nil {
			t.Errorf("runTasks in %s: %v", dirs[1], err)
		}
		var a runToolAnswer
		_ = json.Unmarshal(r.structured, &a)
		waiterDone <- a
	}()
	var owner int
	until(t, func() bool { owner = waitedFor(sessions[1], "waiter")["lib#build"]; return owner > 0 }, func() string { return "" },
		func() string { return "the second checkout does not wait for lib#build" })
	if owner == sessions[0].cmd.Process.Pid || owner == sessions[1].cmd.Process.Pid {
		t.Fatalf("the owner named, pid %d, is a vx mcp server, not the first checkout's vx run", owner)
	}
	if err := syscall.Kill(owner, syscall.SIGKILL); err != nil {
		t.Fatalf("kill the owner, pid %d: %v", owner, err)
	}
	<-ownerDone // the first checkout's call ends, its run killed
	// The waiter takes the key over: it runs lib#build itself (a third execution of lib).
	until(t, func() bool { return executions(t, countFile)["lib"] == 3 }, func() string { return "" },
		func() string { return "the waiter did not take lib#build over" })
	addGate(t, gate, "lib-two")
	a := <-waiterDone
	if a.Summary == nil || !a.Summary.OK || a.statuses()["lib#build"] != "miss" {
		t.Fatalf("the waiter's runTasks = %+v, want ok with lib#build run (miss)", a)
	}
	checkOutput(t, dirs[1], "app", "app\nmid1\nlib-two\nmid2\nlib-two\n")
	if got := executions(t, countFile); fmt.Sprint(got) != "map[app:2 lib:3 mid1:2 mid2:2]" {
		t.Errorf("executions = %v, want lib three times (the first, the killed owner's, the waiter's), each other build twice", got)
	}
}

// checkOutput checks a project's dist/out.txt in a checkout.
func checkOutput(t *testing.T, dir, project, want string) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(dir, "packages", project, "dist/out.txt"))
	if err != nil || string(got) != want {
		t.Errorf("%s: %s/dist/out.txt = %q (%v), want %q", dir, project, got, err, want)
	}
}
