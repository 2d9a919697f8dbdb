package stress

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/counters"
)

// countsFile holds what a full hit of G1 may cost, counted rather than timed, with the reason
// for each figure.
const countsFile = "testdata/counts.json"

// countsUpdate says how to change countsFile; every failure of TestFullHitCounts ends with it.
const countsUpdate = `a count that changed must be written down in stress/testdata/counts.json: its new "count" ` +
	`and, in "reason", what the run does that many times and why the change is worth it ` +
	`(a lower count is written down too, so that it cannot rise again unseen)`

// expectedCount is one figure of countsFile and why it is what it is.
type expectedCount struct {
	Count  int64  `json:"count"`
	Reason string `json:"reason"`
}

// TestFullHitCounts runs G1 (stress/shapes) at 25 and 100 projects through the vx binary, once
// cold, as a full hit and as a restore of every output, and holds the full hit's and the
// restore's operation counts (engine/counters: processes
// spawned, SQLite statements, input files opened, stat calls) to countsFile: a change that
// raises or lowers one fails until the new count is written down with its reason. Counts that
// have no reason to grow with the workspace (processes, files opened) must be the same at both
// sizes.
func TestFullHitCounts(t *testing.T) {
	want := readCounts(t)
	vx := buildVX(t)
	shapes := buildShapes(t)
	got := map[string]counters.Counts{}
	for _, n := range []int{25, 100} {
		name := fmt.Sprintf("g1-%d", n)
		got[name], got[name+"-restore"] = fullHitCounts(t, vx, shapes, n)
		t.Logf("%s: %+v; restore: %+v", name, got[name], got[name+"-restore"])
	}
	for name, counts := range got {
		checkCounts(t, name, counts, want[name])
	}
	for _, run := range []string{"", "-restore"} {
		small, large := got["g1-25"+run], got["g1-100"+run]
		if small.ProcessesSpawned != large.ProcessesSpawned || small.FilesOpened != large.FilesOpened {
			t.Errorf("g1%s: processes spawned (%d at 25, %d at 100) and files opened (%d, %d) grow with the workspace; they must not",
				run, small.ProcessesSpawned, large.ProcessesSpawned, small.FilesOpened, large.FilesOpened)
		}
	}
	if t.Failed() {
		doc, _ := json.Marshal(got)
		t.Logf("counted: %s\n%s", doc, countsUpdate)
	}
}

// readCounts reads countsFile: shape name → counter name → expected count.
func readCounts(t *testing.T) map[string]map[string]expectedCount {
	t.Helper()
	b, err := os.ReadFile(countsFile)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]map[string]expectedCount
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("read %s: %v", countsFile, err)
	}
	return want
}

// checkCounts compares one shape's counts with its expectations, every counter of both.
func checkCounts(t *testing.T, name string, got counters.Counts, want map[string]expectedCount) {
	t.Helper()
	var fields map[string]int64
	b, _ := json.Marshal(got)
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	for field, n := range fields {
		w, ok := want[field]
		switch {
		case !ok:
			t.Errorf("%s: %s = %d has no entry in %s", name, field, n, countsFile)
		case strings.TrimSpace(w.Reason) == "":
			t.Errorf("%s: %s has no reason in %s", name, field, countsFile)
		case n > w.Count:
			t.Errorf("%s: %s rose to %d from %d (%s)", name, field, n, w.Count, w.Reason)
		case n < w.Count:
			t.Errorf("%s: %s fell to %d from %d (%s)", name, field, n, w.Count, w.Reason)
		}
	}
	for field := range want {
		if _, ok := fields[field]; !ok {
			t.Errorf("%s: %s in %s is no longer counted", name, field, countsFile)
		}
	}
}

// buildShapes builds the shapes generator into a temporary folder.
func buildShapes(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "shapes")
	cmd := exec.Command("go", "build", "-o", bin, "./shapes")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// fullHitCounts generates G1 at n projects (task commands given to vx directly, no group task),
// commits it to git, runs build and test cold, then twice more, then once more after deleting
// every output, and answers the third run's counts (the steady full hit) and the last's (a
// restore of every task with outputs). The sources' modification times are dated back an hour
// first: a file the cold run recorded within the stat cache's too-recent-to-trust window of its
// change is read again by a hit, so without it the count of a small, fast workspace depends on
// the clock.
func fullHitCounts(t *testing.T, vx, shapes string, n int) (hit, restore counters.Counts) {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	runIn(t, dir, shapes, "-shape", "g1", "-n", fmt.Sprint(n), "-vx-direct", "-vx-groups=false", "-out", ws)
	datedBack(t, ws)
	runIn(t, ws, "git", "init", "-q")
	runIn(t, ws, "git", "add", "-A")
	runIn(t, ws, "git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
	store := "VX_CACHE_DIR=" + filepath.Join(dir, "store")
	for _, counts := range []string{"cold.json", "first-hit.json", "hit.json"} {
		runInEnv(t, ws, []string{store, "VX_COUNTERS=" + filepath.Join(dir, counts)}, vx, "run", "build", "test")
	}
	outputs, err := filepath.Glob(filepath.Join(ws, "packages", "*", "dist"))
	if err != nil || len(outputs) != n {
		t.Fatalf("g1-%d: %d output folders after the build, want %d (%v)", n, len(outputs), n, err)
	}
	for _, d := range outputs {
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
	}
	runInEnv(t, ws, []string{store, "VX_COUNTERS=" + filepath.Join(dir, "restore.json")}, vx, "run", "build", "test")
	return readCountsOf(t, filepath.Join(dir, "hit.json")), readCountsOf(t, filepath.Join(dir, "restore.json"))
}

// readCountsOf reads the counts a run wrote to file.
func readCountsOf(t *testing.T, file string) counters.Counts {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var c counters.Counts
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("read the counts of %s: %v", file, err)
	}
	return c
}

// datedBack sets the modification time of every file under dir an hour back.
func datedBack(t *testing.T, dir string) {
	t.Helper()
	past := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(path, past, past)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func runIn(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	runInEnv(t, dir, nil, name, args...)
}

func runInEnv(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}
