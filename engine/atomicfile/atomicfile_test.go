package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// noTemps fails the test when dir holds a temporary file.
func noTemps(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if IsTemp(e.Name()) {
			t.Errorf("left %s behind", e.Name())
		}
	}
}

func TestWriteFileReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "doc.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "new" {
		t.Fatalf("content %q", got)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("mode %v, want private to the owner", fi.Mode())
	}
	noTemps(t, dir)
}

func TestPerm(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "vx.lock")
	if err := WriteFile(path, []byte("x"), Perm(0o644)); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v %v, want 0644", fi.Mode(), err)
	}
}

func TestNoReplaceFirstWins(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "secret-salt")
	if err := WriteFile(path, []byte("first"), NoReplace()); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(path, []byte("second"), NoReplace())
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second write: %v, want fs.ErrExist", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "first" {
		t.Fatalf("content %q, want the first", got)
	}
	noTemps(t, dir)
}

// A write that fails leaves the target as it was and no temporary file.
func TestFailedWriteChangesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "resolved.gob")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(path, func(w io.Writer) error {
		_, _ = w.Write([]byte("half"))
		// The temporary file is beside the target, and IsTemp knows it.
		temps, _ := filepath.Glob(filepath.Join(dir, ".resolved.gob.*"))
		if len(temps) != 1 || !IsTemp(filepath.Base(temps[0])) {
			t.Errorf("temporary files %v", temps)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Fatalf("content %q", got)
	}
	noTemps(t, dir)
}

func TestMissingFolder(t *testing.T) {
	if err := WriteFile(filepath.Join(t.TempDir(), "no", "such"), []byte("x")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err %v, want fs.ErrNotExist", err)
	}
}

// Readers of a file rewritten by many writers at once see one whole content, never a mix.
func TestConcurrentWritersNeverTorn(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "blob")
	contents := make([][]byte, 8)
	for i := range contents {
		contents[i] = bytes.Repeat([]byte(fmt.Sprint(i)), 64<<10)
	}
	if err := WriteFile(path, contents[0]); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range contents {
		wg.Go(func() {
			for range 5 {
				if err := WriteFile(path, contents[i]); err != nil {
					t.Error(err)
				}
			}
		})
	}
	done := make(chan struct{})
	var readers sync.WaitGroup
	readers.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Error(err)
				return
			}
			if len(got) != 64<<10 || !bytes.Equal(got, bytes.Repeat(got[:1], len(got))) {
				t.Errorf("read a torn file of %d bytes", len(got))
				return
			}
		}
	})
	wg.Wait()
	close(done)
	readers.Wait()
	noTemps(t, dir)
}

func TestIsTemp(t *testing.T) {
	for name, want := range map[string]bool{
		".vx.lock.123.tmp": true, ".abc.9.tmp": true,
		"vx.lock": false, "x.tmp": false, ".gitignore": false,
	} {
		if IsTemp(name) != want {
			t.Errorf("IsTemp(%q) = %v", name, !want)
		}
	}
}

// An unsynced write replaces the file whole as a synced one does, and leaves no temporary file,
// whether it succeeds or fails.
func TestUnsyncedReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "blob")
	for _, text := range []string{"one", "two"} {
		if err := WriteFile(path, []byte(text), Unsynced()); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != text {
			t.Fatalf("content %q, want %q", got, text)
		}
	}
	boom := errors.New("boom")
	if err := Write(path, func(w io.Writer) error { return boom }, Unsynced()); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if err := WriteFile(path, []byte("three"), Unsynced(), NoReplace()); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("no-replace over a file: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "two" {
		t.Fatalf("content %q after the failed writes", got)
	}
	noTemps(t, dir)
}
