package remoteexec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInputsFromDisk: files by content and executable bit, a link kept as a link (never
// followed), and the tree they make is the one the same inputs given by hand make.
func TestInputsFromDisk(t *testing.T) {
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "src", "lib"), 0o755))
	must(os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello\n"), 0o644))
	must(os.WriteFile(filepath.Join(root, "b.txt"), []byte("b\n"), 0o644))
	must(os.WriteFile(filepath.Join(root, "src", "b.sh"), []byte("echo hi\n"), 0o755))
	must(os.WriteFile(filepath.Join(root, "src", "lib", "c.txt"), []byte("c\n"), 0o644))
	must(os.Symlink("a.txt", filepath.Join(root, "link")))
	inputs, sources, err := InputsFromDisk(root, []string{"a.txt", "b.txt", "link", "src/b.sh", "src/lib/c.txt"})
	must(err)
	if len(sources) != 4 {
		t.Fatalf("%d file sources, want 4 (the link has none)", len(sources))
	}
	tree, err := BuildTree(inputs)
	must(err)
	// The tree of TestTreeDigests, made from the same files given by hand.
	if tree.Root != (Digest{"8898253bbb3d9ef194ec7e09be660159369a3d3dfac1d96fbda4bbc0f38ac90d", 251}) {
		t.Fatalf("root %+v", tree.Root)
	}
	must(os.Mkdir(filepath.Join(root, "dir"), 0o755))
	if _, _, err := InputsFromDisk(root, []string{"dir"}); err == nil || !strings.Contains(err.Error(), "neither a file nor a link") {
		t.Fatalf("a folder as an input: %v", err)
	}
	if _, _, err := InputsFromDisk(root, []string{"../outside"}); err == nil {
		t.Fatal("a path out of the root was read")
	}
}
