package store

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Of runs making the salt at once, the first one kept wins: every one answers the salt on disk,
// which only its owner may read.
func TestSaltFirstWriterWins(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".vx")
	salts := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range salts {
		wg.Go(func() {
			s, err := Salt(dir, true)
			if err != nil {
				t.Error(err)
			}
			salts[i] = s
		})
	}
	wg.Wait()
	kept, err := Salt(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range salts {
		if !bytes.Equal(s, kept) {
			t.Errorf("run %d answered another salt than the one kept", i)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, saltFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("mode %v, want private to the owner", fi.Mode())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the state folder holds %d files, want the salt alone", len(entries))
	}
}

// A reader without a salt gets a random one and writes nothing.
func TestSaltReaderCreatesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".vx")
	s, err := Salt(dir, false)
	if err != nil || len(s) != 32 {
		t.Fatalf("salt %x %v", s, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a reader created %s", dir)
	}
}
