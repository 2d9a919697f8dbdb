package watchloop

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vzn/vx/engine/watch"
)

// describe names a change in a few words: its first paths, those a key depends on first — a file
// that is there now before one that is gone — and an editor's temporary files (vim's 4913 and
// .swp, file~, emacs' .#file, JetBrains' ___jb_tmp___) named only when nothing else changed.
// exists reports whether a root-relative path is there now.
func describe(c watch.Change, exists func(rel string) bool) string {
	if len(c.Paths) == 0 {
		return "the workspace was scanned again"
	}
	rank := func(rel string) int {
		switch {
		case editorTemporary(path.Base(rel)):
			return 2
		case !exists(rel):
			return 1
		}
		return 0
	}
	paths := slices.Clone(c.Paths)
	slices.SortStableFunc(paths, func(a, b string) int { return cmp.Compare(rank(a), rank(b)) })
	shown := paths
	if i := slices.IndexFunc(paths, func(p string) bool { return rank(p) == 2 }); i > 0 {
		shown = paths[:i]
	}
	if len(shown) <= 3 {
		return strings.Join(shown, ", ") + " changed"
	}
	return fmt.Sprintf("%s and %d more files changed", strings.Join(shown[:2], ", "), len(paths)-2)
}

// editorTemporary reports whether a file's name is one an editor gives the temporary files it
// writes beside the file it saves: vim's probe (4913, 5036, …), swap (.x.swp, .swo, .swx) and
// backup (x~), emacs' lock (.#x) and auto-save (#x#), JetBrains' safe-write copies
// (x___jb_tmp___, x___jb_old___), kate's swap (.x.kate-swp) and GTK's (.goutputstream-*).
func editorTemporary(name string) bool {
	switch {
	case name != "" && strings.Trim(name, "0123456789") == "":
		return true
	case strings.HasSuffix(name, "~"), strings.HasPrefix(name, ".#"),
		len(name) > 1 && strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#"),
		strings.HasSuffix(name, "___jb_tmp___"), strings.HasSuffix(name, "___jb_old___"),
		strings.HasSuffix(name, ".kate-swp"), strings.HasPrefix(name, ".goutputstream-"):
		return true
	}
	switch path.Ext(name) {
	case ".swp", ".swo", ".swx", ".swn":
		return strings.HasPrefix(name, ".")
	}
	return false
}

// exists answers whether a root-relative path is there now, by the watcher's file state (the
// disk's when it cannot vouch for one).
func (l *loop) exists(ctx context.Context) func(rel string) bool {
	files := l.files(ctx)
	return func(rel string) bool {
		var err error
		if files != nil {
			_, err = files.Lstat(rel)
		} else {
			_, err = os.Lstat(filepath.Join(l.ws.Root, filepath.FromSlash(rel)))
		}
		return err == nil
	}
}
