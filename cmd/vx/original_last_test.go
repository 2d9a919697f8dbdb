package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/vzn/vx/internal/testkit"
)

// vx last --format json validates against the original's last.json: the run's invocation and its
// tasks in the original's shapes (vx's summary fields beside them), and --list a list of
// invocations, newest first. The second run hit every task from the local cache; --out writes the
// same document.
func TestLastValidatesAgainstTheOriginal(t *testing.T) {
	dir := testkit.TempRepo(t, originalWorkspace)
	schema := originalSchema(t, "last", "", nil)
	vxRunQuiet(t, dir, "run", "build", "lint")
	vxRunQuiet(t, dir, "run", "build", "lint")
	out := cliJSON(t, dir, "last")
	validateOriginal(t, "vx last --format json", schema, out)
	type invocation struct {
		RunID, Command                                                  string
		CommitSha, Branch, OS, Arch                                     *string
		VxVersion                                                       string
		RequestedTasks                                                  []string
		TaskCount, FailedCount, HitCount, HitLocalCount, HitRemoteCount int
		ExitOk                                                          bool
		StartedAt, EndedAt                                              int64
	}
	var doc struct {
		RunID      string
		Invocation invocation
		Tasks      []struct {
			RunID, Project, Task, Status string
			ExitCode                     int
			CacheHit                     *bool
			StartedAt, EndedAt           int64
		}
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	inv := doc.Invocation
	if inv.RunID != doc.RunID || inv.Command != "vx run build lint" || inv.TaskCount != 4 || inv.HitCount != 4 ||
		inv.HitLocalCount != 4 || inv.HitRemoteCount != 0 || inv.FailedCount != 0 || !inv.ExitOk || inv.EndedAt < inv.StartedAt {
		t.Errorf("invocation %+v of run %s, want 4 local hits of vx run build lint", inv, doc.RunID)
	}
	head, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	branch, err := exec.Command("git", "-C", dir, "symbolic-ref", "--short", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	if str := func(p *string) string {
		if p == nil {
			return "<null>"
		}
		return *p
	}; str(inv.CommitSha) != strings.TrimSpace(string(head)) || str(inv.Branch) != strings.TrimSpace(string(branch)) ||
		str(inv.OS) != runtime.GOOS || str(inv.Arch) != runtime.GOARCH || inv.VxVersion == "" {
		t.Errorf("invocation commit %s branch %s os %s arch %s vx %q; want %s %s %s %s and a version", str(inv.CommitSha), str(inv.Branch),
			str(inv.OS), str(inv.Arch), inv.VxVersion, head, branch, runtime.GOOS, runtime.GOARCH)
	}
	if len(doc.Tasks) != 4 {
		t.Fatalf("tasks %+v, want 4", doc.Tasks)
	}
	for _, r := range doc.Tasks {
		if r.RunID != doc.RunID || r.Project == "" || r.Status != "hit" || r.CacheHit == nil || !*r.CacheHit || r.ExitCode != 0 || r.StartedAt < inv.StartedAt {
			t.Errorf("task row %+v", r)
		}
	}
	file := filepath.Join(t.TempDir(), "last.json")
	vxRunQuiet(t, dir, "last", "--out", file)
	written, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := compact(t, written); string(got) != string(out) {
		t.Errorf("vx last --out wrote %s\nvx last --format json printed %s", got, out)
	}

	list := cliJSON(t, dir, "last", "--list")
	validateOriginal(t, "vx last --list --format json", schema, list)
	var runs []invocation
	if err := json.Unmarshal(list, &runs); err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].RunID != doc.RunID || runs[0].HitLocalCount != 4 || runs[1].HitCount != 0 || runs[1].TaskCount != 4 {
		t.Errorf("vx last --list = %+v, want the hit run first, then the first run", runs)
	}
}
