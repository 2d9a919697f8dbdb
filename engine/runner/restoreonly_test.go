package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/graph"
)

// TestRestoreOnlyNeverRuns: a task the run may only restore (vx run --exclude-dependencies) fails
// without running where its key misses, blocking what depends on it, and is restored where it hits.
func TestRestoreOnlyNeverRuns(t *testing.T) {
	f := newFixture(t)
	lib := f.project("lib")
	app := f.project("app", "lib")
	f.task(lib, "build", "echo lib-ran >> ../../ran.txt", nil)
	f.task(app, "build", "echo app-ran >> ../../ran.txt", func(t *graph.Task) { t.DependsOn = []string{"lib#build"} })
	ids := []string{"lib#build", "app#build"}
	restoreLib := func(o *Options) {
		o.Requested = []string{"app#build"}
		o.RestoreOnly = map[string]bool{"lib#build": true}
	}
	ran := func() string {
		b, _ := os.ReadFile(filepath.Join(f.root, "ran.txt"))
		return strings.TrimSpace(strings.ReplaceAll(string(b), "\n", " "))
	}

	s, out := f.run(ids, restoreLib)
	if got := statuses(s); got != "lib#build=failed app#build=blocked" {
		t.Fatalf("cold: statuses %s\n%s", got, out)
	}
	if !strings.Contains(out, "lib#build has no cache entry for its key") {
		t.Fatalf("cold: the failure does not say why:\n%s", out)
	}
	if got := ran(); got != "" {
		t.Fatalf("cold: ran %q", got)
	}

	f.run(ids, nil) // stores lib#build
	if err := os.Remove(filepath.Join(f.root, "ran.txt")); err != nil {
		t.Fatal(err)
	}
	f.write("packages/app/src.txt", "moved") // app#build's key moves; lib#build's does not
	s, out = f.run(ids, restoreLib)
	if got := statuses(s); got != "lib#build=hit app#build=miss" {
		t.Fatalf("warm: statuses %s\n%s", got, out)
	}
	if got := ran(); got != "app-ran" {
		t.Fatalf("warm: ran %q", got)
	}
}
