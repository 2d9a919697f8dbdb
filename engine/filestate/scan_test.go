package filestate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestScanVisibleAfterAMissingFolder asks a Scan of a git work tree for a folder that is not
// there, then for one that is: the first errs, and the second still answers what git shows, the
// ignored output folder left out, not every file on disk.
func TestScanVisibleAfterAMissingFolder(t *testing.T) {
	root := t.TempDir()
	for name, text := range map[string]string{".gitignore": "dist/\n", "pkg/src/a.js": "a\n", "pkg/dist/out.js": "out\n"} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := exec.Command("git", "init", "-q")
	git.Dir = root
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	scan := NewScan(root, filepath.Join(root, ".vx"))
	ctx := context.Background()
	if files, err := scan.Visible(ctx, "gone"); err == nil {
		t.Fatalf("a missing folder: %q, no error", files)
	}
	files, err := scan.Visible(ctx, "pkg")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"src/a.js"}; !slices.Equal(files, want) {
		t.Fatalf("visible in pkg after a missing folder: %q, want %q", files, want)
	}
}
