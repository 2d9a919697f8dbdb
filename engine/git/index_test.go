//go:build linux

package git

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadIndexEntries: every stage-0 entry is read with its id and stat data, whatever its
// name holds (a tab, a newline, a space), and the stat data CleanID compares is the file's own.
func TestReadIndexEntries(t *testing.T) {
	dir := gitRepo(t)
	names := []string{"plain.txt", "tab\there.txt", "new\nline.txt", "sub dir/x.txt"}
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "-C", dir, "add", "-A").CombinedOutput(); err != nil {
		t.Fatalf("git add: %v %s", err, out)
	}
	// The index is written again once the clock left the tick of the files' stamps: no entry is
	// racily clean.
	time.Sleep(20 * time.Millisecond)
	if out, err := exec.Command("git", "-C", dir, "update-index", "--really-refresh").CombinedOutput(); err != nil {
		t.Fatalf("git update-index: %v %s", err, out)
	}
	x, err := ReadIndex(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if x.Format != "sha1" || len(x.Entries) != len(names) {
		t.Fatalf("format %s, %d entries: %v", x.Format, len(x.Entries), x.Entries)
	}
	for _, n := range names {
		out, err := exec.Command("git", "-C", dir, "hash-object", "--", n).Output()
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		fs := FileStat{Regular: true, Size: fi.Size(), MtimeNs: fi.ModTime().UnixNano(),
			CtimeNs: st.Ctim.Sec*1e9 + st.Ctim.Nsec, Ino: st.Ino}
		id, ok := x.CleanID(n, fs)
		if want := strings.TrimSpace(string(out)); !ok || id != want {
			t.Fatalf("%q: clean %v id %s, want %s", n, ok, id, want)
		}
		fs.Size++
		if _, ok := x.CleanID(n, fs); ok {
			t.Fatalf("%q: clean with another size", n)
		}
	}
}
