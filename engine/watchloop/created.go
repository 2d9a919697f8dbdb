package watchloop

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"

	"github.com/vzn/vx/engine/filestate"
)

// withoutCreated is the file state now with every file that did not exist at a run's start left
// out: what the run's own tasks may have created (a build tool's temporary files beside its
// sources) counts only if it is still there when the run ends. A file that existed at the start
// and was changed, or removed, counts at once.
type withoutCreated struct {
	now   filestate.Source
	start filestate.Source
}

// existed reports whether rel (root-relative) was there at the run's start.
func (w withoutCreated) existed(rel string) bool {
	_, err := w.start.Lstat(rel)
	return err == nil
}

// Visible answers now's visible files under dir that existed at the start.
func (w withoutCreated) Visible(ctx context.Context, dir string) ([]string, error) {
	files, err := w.now.Visible(ctx, dir)
	if err != nil {
		return nil, err
	}
	out := files[:0:0]
	for _, f := range files {
		rel := f
		if dir != "." && dir != "" {
			rel = path.Join(dir, f)
		}
		if w.existed(rel) {
			out = append(out, f)
		}
	}
	return out, nil
}

// Lstat answers now's lstat of rel, or that it does not exist when it was created since the start.
func (w withoutCreated) Lstat(rel string) (fs.FileInfo, error) {
	if rel != "" && rel != "." && !w.existed(rel) {
		return nil, &fs.PathError{Op: "lstat", Path: rel, Err: fmt.Errorf("created during the run: %w", os.ErrNotExist)}
	}
	return w.now.Lstat(rel)
}

// WalkFiles walks now's files under base that existed at the start.
func (w withoutCreated) WalkFiles(base string, fn func(rel string, mode fs.FileMode)) error {
	return w.now.WalkFiles(base, func(rel string, mode fs.FileMode) {
		if w.existed(rel) {
			fn(rel, mode)
		}
	})
}
