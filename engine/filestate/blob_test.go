package filestate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBlobIDsAreGits: blob ids of raw content and of content with CRLF line endings removed —
// with a CR at the end of each 32 KiB read and its LF at the start of the next — are the ids
// git gives, in SHA-1 and SHA-256.
func TestBlobIDsAreGits(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	line := strings.Repeat("x", 32*1024-1) + "\r\n"
	content := strings.Repeat(line, 3) + "lone\rcr\r\nend\r"
	for _, format := range []string{FormatSHA1, FormatSHA256} {
		dir := t.TempDir()
		git := func(args ...string) string {
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("git %v: %v %s", args, err, out)
			}
			return strings.TrimSpace(string(out))
		}
		git("init", "-q", "--object-format="+format)
		path := filepath.Join(dir, "f.txt")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := ReadBlob(path, format)
		if err != nil {
			t.Fatal(err)
		}
		if want := git("hash-object", "--no-filters", "f.txt"); b.ID != want || BlobID(format, []byte(content)) != want {
			t.Fatalf("%s: raw id %s, git %s", format, b.ID, want)
		}
		if b.Stats.CRLF != 4 || b.Stats.LoneCR != 2 {
			t.Fatalf("%s: counted %d CRLF and %d lone CR", format, b.Stats.CRLF, b.Stats.LoneCR)
		}
		if err := os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("*.txt text\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		clean, err := ReadCleanBlob(path, format, b)
		if err != nil {
			t.Fatal(err)
		}
		if want := git("hash-object", "f.txt"); clean != want {
			t.Fatalf("%s: clean id %s, git %s", format, clean, want)
		}
	}
}
