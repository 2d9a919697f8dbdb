package store

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/atomicfile"
)

func TestCASCorruptIsMissing(t *testing.T) {
	c := NewCAS(t.TempDir())
	h, err := c.Put([]byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if data, err := c.Get(h); err != nil || string(data) != "hello" {
		t.Fatalf("get: %q %v", data, err)
	}
	if err := os.WriteFile(c.Path(h), []byte("hellO"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(h); !errors.Is(err, ErrMissing) {
		t.Fatalf("corrupt blob: %v", err)
	}
	if _, err := c.Get(strings.Repeat("0", 64)); !errors.Is(err, ErrMissing) {
		t.Fatalf("missing blob: %v", err)
	}
}

// A blob being written is a temporary file Walk marks as such, so that a prune at work beside a
// run gives it time rather than removing it as an orphan; so is the leftover of an earlier vx.
func TestCASWalkMarksTemps(t *testing.T) {
	c := NewCAS(t.TempDir())
	h, err := c.Put([]byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(filepath.Dir(c.Path(h)), ".tmp-123")
	if err := os.WriteFile(old, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err = atomicfile.Write(filepath.Join(filepath.Dir(c.Path(h)), strings.Repeat("f", 64)), func(io.Writer) error {
		blobs, err := c.Walk()
		if err != nil {
			return err
		}
		var temps []string
		for _, b := range blobs {
			if b.Temp {
				temps = append(temps, b.Name)
			} else if b.Name != h {
				t.Errorf("%s listed as a blob", b.Name)
			}
		}
		if len(temps) != 2 {
			t.Errorf("temporary files %v, want the write in flight and .tmp-123", temps)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The empty blob's content is its name: it is answered, whole and checked, even when its file is
// gone or damaged, and never read from disk.
func TestCASEmptyBlobKnown(t *testing.T) {
	c := NewCAS(t.TempDir())
	h, err := c.Put(nil)
	if err != nil || h != emptyHash {
		t.Fatalf("put: %s %v", h, err)
	}
	if err := os.WriteFile(c.Path(h), []byte("not empty"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := c.GetBounded(h, 10); err != nil || len(data) != 0 {
		t.Errorf("GetBounded: %q %v", data, err)
	}
	if err := os.Remove(c.Path(h)); err != nil {
		t.Fatal(err)
	}
	if data, err := c.Get(h); err != nil || len(data) != 0 || !c.Has(h) {
		t.Errorf("Get: %q %v, Has %v", data, err, c.Has(h))
	}
}

// The blob store remembers the shard folders it made, and makes one again that was removed
// since (the store cleared beside a run), for a blob in memory and a streamed one alike.
func TestCASRemakesRemovedShard(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cas")
	c := NewCAS(dir)
	h, err := c.Put([]byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if h2, err := c.Put([]byte("hello")); err != nil || h2 != h {
		t.Fatalf("put after the folder went: %s %v", h2, err)
	}
	if data, err := c.Get(h); err != nil || string(data) != "hello" {
		t.Fatalf("get: %q %v", data, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := c.PutStream(h, 5, strings.NewReader("hello")); err != nil {
		t.Fatalf("stream after the folder went: %v", err)
	}
	if data, err := c.Get(h); err != nil || string(data) != "hello" {
		t.Fatalf("get: %q %v", data, err)
	}
	// A stream of another content is refused, and leaves nothing.
	other := strings.Repeat("1", 64)
	if err := c.PutStream(other, 5, strings.NewReader("hello")); !errors.Is(err, ErrBlobMismatch) {
		t.Fatalf("mismatched stream: %v", err)
	}
	if _, err := os.Stat(c.Path(other)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("mismatched stream left %s: %v", c.Path(other), err)
	}
	blobs, err := c.Walk()
	if err != nil || len(blobs) != 1 || blobs[0].Temp {
		t.Fatalf("blobs %+v %v", blobs, err)
	}
}

// Storing the empty blob again leaves an empty file as it is, and heals one that is damaged, gone,
// or not a file.
func TestCASEmptyBlobWrittenOnlyWhereNotWhole(t *testing.T) {
	c := NewCAS(t.TempDir())
	h, err := c.Put(nil)
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.Lstat(c.Path(h))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put([]byte{}); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Lstat(c.Path(h)); err != nil || !os.SameFile(before, after) {
		t.Fatalf("a whole empty blob was written again: %v", err)
	}
	for name, damage := range map[string]func(p string) error{
		"not empty": func(p string) error { return os.WriteFile(p, []byte("x"), 0o644) },
		"gone":      os.Remove,
		"a link": func(p string) error {
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.Symlink("/dev/null", p)
		},
	} {
		if err := damage(c.Path(h)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Put(nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fi, err := os.Lstat(c.Path(h)); err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
			t.Fatalf("%s: the empty blob not healed: %v %v", name, fi, err)
		}
	}
}
