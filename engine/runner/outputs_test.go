package runner

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// An output folder that is a symlink (to another of the task's outputs) is cached as the symlink,
// and a hit brings the link back.
func TestSymlinkedOutputFolderRestored(t *testing.T) {
	f := newTrustFixture(t, "mkdir -p build && echo x > build/x.js && ln -sfn build out")
	f.p.Tasks["build"].Outputs = []string{"out/**", "build/**"}
	f.runExpect("p#build=miss")
	out := filepath.Join(f.p.AbsDir, "out")
	if err := os.Remove(out); err != nil {
		t.Fatal(err)
	}
	f.runExpect("p#build=hit")
	if target, err := os.Readlink(out); err != nil || target != "build" {
		t.Errorf("out after the hit: %q %v", target, err)
	}
}

// Outputs whose names and link targets are long (past the 100 bytes of a tar header's field) or
// not ASCII are archived and restored whole.
func TestLongAndUnicodeOutputsRestored(t *testing.T) {
	long := strings.Repeat("very-long-folder-name/", 8) + "file-" + strings.Repeat("x", 120) + ".js"
	cmd := fmt.Sprintf("mkdir -p dist/%s && echo long > dist/%s && echo ü > 'dist/çà ü.txt' && ln -sfn %s dist/link",
		path.Dir(long), long, long)
	f := newTrustFixture(t, cmd) // its first run stored the outputs
	os.RemoveAll(filepath.Join(f.p.AbsDir, "dist"))
	f.runExpect("p#build=hit")
	for name, want := range map[string]string{long: "long\n", "çà ü.txt": "ü\n"} {
		if got, err := os.ReadFile(filepath.Join(f.p.AbsDir, "dist", name)); err != nil || string(got) != want {
			t.Errorf("%s: %q %v", name, got, err)
		}
	}
	if target, err := os.Readlink(filepath.Join(f.p.AbsDir, "dist/link")); err != nil || target != long {
		t.Errorf("link: %q %v", target, err)
	}
}
