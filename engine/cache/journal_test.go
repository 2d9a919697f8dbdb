package cache

import (
	"os"
	"path/filepath"
	"testing"
)

// A journal cut short by a kill is read up to its last whole record, and rolling it back twice
// (a kill during the rollback itself) ends as once does.
func TestJournalRollbackTornAndTwice(t *testing.T) {
	f := newCacheFixture(t)
	f.before()
	dist := filepath.Join(f.p.AbsDir, "dist")
	j := newJournal(f.ws.CacheDir, f.root, f.task.ID)
	if err := j.creating("packages/p/dist/new", false); err != nil {
		t.Fatal(err)
	}
	f.write("packages/p/dist/new", "new\n")
	aside, err := j.aside("packages/p/dist/o.txt")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dist, "o.txt"), filepath.Join(f.root, aside)); err != nil {
		t.Fatal(err)
	}
	f.write("packages/p/dist/o.txt", "new\n")
	if _, err := j.f.WriteString(`r "packages/p/dist/keep.txt`); err != nil { // torn by the kill
		t.Fatal(err)
	}
	file := filepath.Join(j.dir, j.name)
	recs, root, err := readJournal(file)
	if err != nil || root != f.root || len(recs) != 2 {
		t.Fatalf("read %v %q %v", recs, root, err)
	}
	for range 2 {
		if err := undo(f.root, recs); err != nil {
			t.Fatal(err)
		}
	}
	j.close(true)
	f.unchanged()
}
