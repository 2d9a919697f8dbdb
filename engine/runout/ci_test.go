package runout

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/mask"
	"github.com/vzn/vx/engine/store"
)

func code(i int) *int { return &i }

// show runs three tasks through a display with logs: one that passes, one that fails with
// many lines, one hit with a log to replay; it answers what the display wrote.
func show(logs LogOptions) string {
	var out bytes.Buffer
	d := NewDisplay(&out, false, mask.New("s3cret"), 3, logs, nil)
	for _, id := range []string{"app#build", "lib#test"} {
		d.Started(id)
	}
	w := d.TaskWriter("app#build")
	fmt.Fprint(w, "building\n::warning::not a command, a task's line\n")
	w.Flush()
	f := d.TaskWriter("lib#test")
	for i := 1; i <= 25; i++ {
		fmt.Fprintf(f, "line %d s3cret\n", i)
	}
	f.Flush()
	d.Finished(store.Execution{TaskID: "app#build", Status: store.StatusMiss, Duration: 2 * time.Second})
	d.Finished(store.Execution{TaskID: "lib#test", Status: store.StatusFailed, ExitCode: code(1), Duration: time.Second})
	d.Finished(store.Execution{TaskID: "web#build", Status: store.StatusHit, Duration: time.Millisecond, Saved: 3 * time.Second})
	d.Hit("web#build", []byte("cached line\n"))
	d.Finish()
	return out.String()
}

// Under GitHub Actions a task that passed is folded in a group of its own, a hit's replayed log
// too; a failure's output stays outside any fold; every line a task printed keeps its prefix, so
// that no task's line is a workflow command.
func TestGitHubGroups(t *testing.T) {
	got := show(LogOptions{GitHub: true})
	want := "::group::app#build\napp#build | building\napp#build | ::warning::not a command, a task's line\n::endgroup::\napp#build: miss (2s)\n"
	if !strings.HasPrefix(got, want) {
		t.Errorf("the passed task:\n%s\nwant it to start\n%s", got, want)
	}
	failed := got[len(want):strings.Index(got, "lib#test: failed")]
	if strings.Contains(failed, "::group::") || strings.Count(failed, "lib#test | line") != 25 || strings.Contains(failed, "s3cret") {
		t.Errorf("the failure's output, outside any fold, masked:\n%s", failed)
	}
	if !strings.HasSuffix(got, "web#build: hit (1ms, saved 3s)\n::group::web#build\nweb#build | cached line\n::endgroup::\n") {
		t.Errorf("the hit:\n%s", got)
	}
	for line := range strings.Lines(got) {
		if strings.HasPrefix(line, "::") && !strings.HasPrefix(line, "::group::") && line != "::endgroup::\n" {
			t.Errorf("a line vx did not mean as a command: %q", line)
		}
	}
}

// An agent's output: no output of a task that passed, a failure's first and last lines with where
// its whole log is, the hits one line at the end.
func TestAgentOutput(t *testing.T) {
	got := show(LogOptions{Agent: true})
	var want strings.Builder
	want.WriteString("app#build: miss (2s)\nlib#test: failed with exit code 1 (1s)\n")
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&want, "lib#test | line %d ***\n", i)
	}
	want.WriteString("lib#test | [… 5 lines …]\n")
	for i := 16; i <= 25; i++ {
		fmt.Fprintf(&want, "lib#test | line %d ***\n", i)
	}
	want.WriteString("lib#test | (25 lines of output; the whole log: vx last --log lib#test)\n")
	want.WriteString("vx: 1 task restored from the cache (saved 3s)\n")
	if got != want.String() {
		t.Errorf("agent output:\n%s\nwant\n%s", got, want.String())
	}
}
