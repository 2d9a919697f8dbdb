package runner

import (
	"os/exec"
	"testing"

	"github.com/vzn/vx/engine/graph"
)

// A task whose outputs lie in another project (a "//" glob) writes that project's files: a task
// of that project keyed after it, and listed for the first time then, takes them as inputs. The
// workspace's first listing, taken before anything ran, no longer vouches for that project: the
// run after would otherwise find a file the key left out, and miss.
func TestOutputsInAnotherProjectAreItsInputs(t *testing.T) {
	f := newFixture(t)
	q := f.project("q")
	p := f.project("p")
	f.task(q, "put", "mkdir -p ../p/put && cp src.txt ../p/put/b.txt", func(t *graph.Task) {
		t.Inputs = []string{"src.txt"}
		t.Outputs = []string{"//packages/p/put/**"}
	})
	f.task(p, "use", "ls -R . > /dev/null", func(t *graph.Task) { t.DependsOn = []string{"q#put"} })
	f.write("packages/q/src.txt", "q")
	f.write("packages/p/src.txt", "p")
	f.write(".gitignore", ".vx/\n")
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = f.root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	ids := []string{"q#put", "p#use"}
	if s, out := f.run(ids, nil); statuses(s) != "q#put=miss p#use=miss" {
		t.Fatalf("cold run: %s\n%s", statuses(s), out)
	}
	if s, out := f.run(ids, nil); statuses(s) != "q#put=hit p#use=hit" {
		t.Fatalf("second run: %s (p#use keyed without put/b.txt?)\n%s", statuses(s), out)
	}
}
