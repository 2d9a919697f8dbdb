package runner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vzn/vx/engine/graph"
)

// A corrupt or missing blob reads as a miss: the task runs again and the run succeeds.
func TestCorruptBlobIsAMiss(t *testing.T) {
	f := newFixture(t)
	p := f.project("p")
	f.task(p, "build", "mkdir -p dist && echo out > dist/o.txt && echo log", func(t *graph.Task) {
		t.Inputs = []string{}
		t.Outputs = []string{"dist/**"}
	})
	ids := []string{"p#build"}
	f.run(ids, nil)
	// Damage every blob, and remove the outputs so that the archive is needed.
	filepath.Walk(filepath.Join(f.ws.CacheDir, "cas"), func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			data, _ := os.ReadFile(path)
			for i := range data {
				data[i] ^= 0xff // same size, other content
			}
			os.WriteFile(path, data, 0o644)
		}
		return nil
	})
	os.RemoveAll(filepath.Join(p.AbsDir, "dist"))
	s, out := f.run(ids, nil)
	if got := statuses(s); got != "p#build=miss" || !s.OK {
		t.Fatalf("after corruption: %s\n%s", got, out)
	}
	// The run stored good blobs again: the next run hits and restores.
	os.RemoveAll(filepath.Join(p.AbsDir, "dist"))
	s, _ = f.run(ids, nil)
	if got := statuses(s); got != "p#build=hit" {
		t.Fatalf("after a fresh store: %s", got)
	}
	if _, err := os.Stat(filepath.Join(p.AbsDir, "dist/o.txt")); err != nil {
		t.Fatal(err)
	}
}
