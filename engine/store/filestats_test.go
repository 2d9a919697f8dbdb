package store

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"
)

// openStore opens a new state folder for writing, closed when the test ends.
func openStore(t *testing.T) *Store {
	t.Helper()
	st, err := Open(context.Background(), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func statOf(i int) FileStat {
	return FileStat{Size: int64(i), MtimeNs: 1_700_000_000_123_456_789 + int64(i), CtimeNs: -int64(i),
		Ino: 1<<63 + uint64(i), Hash: fmt.Sprintf("%064x", i), RecordedNs: 1_700_000_001_000_000_000}
}

// The stat cache goes in by file and comes out by file, whatever folder holds it (the root's files
// too); a put rewrites only the files it names, and a delete drops a folder's row with its last
// file.
func TestStatCacheByFolder(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	want := map[string]FileStat{}
	for i, rel := range []string{"package.json", "a/b.ts", "a/c.ts", "a/d/e.ts", "x/y/z/w.js", "a/d/f g.ts", "ü/é.ts"} {
		want[rel] = statOf(i)
	}
	if err := st.PutFileStats(ctx, want); err != nil {
		t.Fatal(err)
	}
	c, err := st.FileStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for rel, f := range want {
		if got, ok := c.Get(rel); !ok || got != f {
			t.Errorf("Get(%s) = %+v %v, want %+v", rel, got, ok, f)
		}
	}
	if _, ok := c.Get("a/missing.ts"); ok {
		t.Error("a file never put is found")
	}
	if got := c.All(); !maps.Equal(got, want) {
		t.Errorf("All = %v", got)
	}

	changed := statOf(99)
	if err := st.PutFileStats(ctx, map[string]FileStat{"a/c.ts": changed}); err != nil {
		t.Fatal(err)
	}
	want["a/c.ts"] = changed
	if err := st.DeleteFileStats(ctx, []string{"x/y/z/w.js", "a/b.ts", "not/there.ts"}); err != nil {
		t.Fatal(err)
	}
	delete(want, "x/y/z/w.js")
	delete(want, "a/b.ts")
	c, err = st.FileStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.All(); !maps.Equal(got, want) {
		t.Errorf("after a put and a delete: %v", got)
	}
	var folders int
	if err := st.db.QueryRow(`SELECT count(*) FROM stat_folders`).Scan(&folders); err != nil || folders != 4 {
		t.Errorf("%d folder rows (%v), want 4: ., a, a/d, ü", folders, err)
	}
}

// A folder's row that is cut short or garbled answers the files read before the fault, and never
// fails the run: those files are hashed again.
func TestStatCacheDamagedRow(t *testing.T) {
	files := map[string]FileStat{"a.ts": statOf(1), "b.ts": statOf(2), "c.ts": statOf(3)}
	blob := encodeStats(files)
	if got := decodeStats(blob); !maps.Equal(got, files) {
		t.Fatalf("round trip: %v", got)
	}
	for cut := range len(blob) {
		got := decodeStats(blob[:cut])
		for name, f := range got {
			if files[name] != f {
				t.Fatalf("cut at %d: %s = %+v", cut, name, f)
			}
		}
	}
	garbled := append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, blob...)
	if got := decodeStats(garbled); len(got) != 0 {
		t.Errorf("garbled: %v", got)
	}
	huge := append([]byte{0x80, 0x80, 0x80, 0x80, 0x10}, blob...) // a name longer than the row
	if got := decodeStats(huge); len(got) != 0 {
		t.Errorf("a name longer than the row: %v", got)
	}
}

// Workers asking about the same folders at once (go test -race) all see the stored stats.
func TestStatCacheConcurrentGet(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	want := map[string]FileStat{}
	for d := range 20 {
		for f := range 20 {
			want[fmt.Sprintf("p%d/src/f%d.ts", d, f)] = statOf(d*100 + f)
		}
	}
	if err := st.PutFileStats(ctx, want); err != nil {
		t.Fatal(err)
	}
	c, err := st.FileStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for rel, f := range want {
				if got, ok := c.Get(rel); !ok || got != f {
					t.Errorf("Get(%s) = %+v %v", rel, got, ok)
				}
			}
		})
	}
	wg.Wait()
}

// A reader of an index from before the folder layout (version 4, which readers still read) answers
// an empty stat cache, not an error.
func TestStatCacheOlderReader(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.db.Exec(`DROP TABLE stat_folders; DROP INDEX executions_command_runs;
		PRAGMA user_version = 4; UPDATE meta SET value = '4' WHERE key = 'schema'`)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	ro, err := OpenReadOnly(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	c, err := ro.FileStats(ctx)
	if err != nil || len(c.All()) != 0 {
		t.Errorf("%v %v", c.All(), err)
	}
	if _, err := ro.RecentCommandRuns(ctx, []string{"a#build"}, 5); err != nil {
		t.Errorf("command runs without their index: %v", err)
	}
}

// An entry's output listing is stored packed and read back whole, a symlink's target and an empty
// listing too; one cut short answers only the files read before the cut.
func TestEntryListingPacked(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	files := []OutputFile{
		{Path: "dist/a.js", Size: 12, Mode: 0o644, Hash: fmt.Sprintf("%064x", 1)},
		{Path: "//out/ü b.txt", Size: 0, Mode: 0o755, Hash: fmt.Sprintf("%064x", 2)},
		{Path: "dist/link", Mode: 0o777, Link: "../a.js"},
	}
	for _, e := range []Entry{{Hash: "k1", TaskID: "a#build", Outputs: files}, {Hash: "k2", TaskID: "a#lint"}} {
		if err := st.PutEntry(ctx, e); err != nil {
			t.Fatal(err)
		}
		got, ok, err := st.Entry(ctx, e.Hash)
		if err != nil || !ok || len(got.Outputs) != len(e.Outputs) {
			t.Fatalf("%s: %+v %v %v", e.Hash, got.Outputs, ok, err)
		}
		for i := range e.Outputs {
			if got.Outputs[i] != e.Outputs[i] {
				t.Errorf("%s file %d = %+v, want %+v", e.Hash, i, got.Outputs[i], e.Outputs[i])
			}
		}
	}
	packed := encodeListing(files)
	if got := decodeListing(packed[:len(packed)-3]); len(got) != 2 || got[1] != files[1] {
		t.Errorf("a listing cut short: %+v", got)
	}
}
