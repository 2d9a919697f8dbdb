package watch

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// A watched folder moved into a new folder while the watcher lists that new folder is found
// there, by the listing, before the watcher hears that its old name went: its watch is the
// inode's, so fsnotify files the new name's watch under the old name, and dropping the old name
// then drops the watch. The new name must stay watched: a file written in it after is heard.
func TestFolderMovedIntoAFolderBeingListed(t *testing.T) {
	root := repo(t, sample)
	fresh := filepath.Join(root, "packages", "fresh")
	var once sync.Once
	w, err := Start(Options{Root: root, StateDir: filepath.Join(root, ".vx"), Log: func(msg string) { t.Log(msg) },
		addWatch: func(abs string) error {
			if abs == fresh {
				// The folder's watch is not added yet: the move into it makes no event there,
				// only its old name's, which this settle does not have.
				once.Do(func() {
					mustDo(t, os.Rename(filepath.Join(root, "packages/a/src/lib"), filepath.Join(fresh, "lib")))
				})
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	mustDo(t, w.WaitReady(context.Background()))
	mustDo(t, os.Mkdir(fresh, 0o755))
	snapshot(t, w) // the settle that lists fresh, and finds lib in it
	snapshot(t, w) // the settle that hears lib's old name go
	mustDo(t, os.WriteFile(filepath.Join(fresh, "lib", "later.js"), []byte("later\n"), 0o644))
	snap := snapshot(t, w)
	if _, err := snap.Lstat("packages/fresh/lib/later.js"); err != nil {
		t.Fatalf("a file written in the moved folder after: %v", err)
	}
	same(t, root, snap, "packages")
}
