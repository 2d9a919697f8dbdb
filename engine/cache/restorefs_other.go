//go:build !unix

package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"

	"github.com/vzn/vx/engine/store"
)

// newOutputWriter answers the writer of restored outputs beneath root, journaling into j.
func newOutputWriter(root string, j *journal) (*safeWriter, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	return &safeWriter{root: r, j: j}, nil
}

// safeWriter writes restored outputs beneath the workspace root, never through a symlink: every
// folder on a path is checked (and made) without following links, and opened once, so that each
// file is then written by name inside its folder (a few syscalls a file, whatever its depth): to
// its place, which is cleared first: whatever is there is renamed aside in its folder. Every change
// is journaled first (journal.go), so that a rollback removes what the restore made and puts back
// what it moved aside.
type safeWriter struct {
	root *os.Root
	dirs map[string]*os.Root // folders already checked, open
	j    *journal
}

// close closes the folders the writer opened, and its root.
func (w *safeWriter) close() {
	for _, d := range w.dirs {
		d.Close()
	}
	w.root.Close()
}

// dir answers the open folder rel (root-relative, "." for the root), checking and making it and
// the folders above it, none of which may be a symlink.
func (w *safeWriter) dir(rel string) (*os.Root, error) {
	if rel == "." {
		return w.root, nil
	}
	if d, ok := w.dirs[rel]; ok {
		return d, nil
	}
	parent, err := w.dir(path.Dir(rel))
	if err != nil {
		return nil, err
	}
	base := path.Base(rel)
	fi, err := parent.Lstat(base)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := w.j.creating(rel, true); err != nil {
			return nil, err
		}
		if err := parent.Mkdir(base, 0o755); err != nil {
			if !errors.Is(err, fs.ErrExist) {
				return nil, err
			}
			if err := w.j.notCreated(rel, true); err != nil {
				return nil, err
			}
		}
	case err != nil:
		return nil, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("%s is a symlink: vx never restores through one", rel)
	case !fi.IsDir():
		return nil, fmt.Errorf("%s is a file where the outputs need a folder", rel)
	}
	// OpenRoot never follows a symlink put there since the check: it would escape the root.
	d, err := parent.OpenRoot(base)
	if err != nil {
		return nil, err
	}
	if w.dirs == nil {
		w.dirs = map[string]*os.Root{}
	}
	w.dirs[rel] = d
	return d, nil
}

// clear journals the creation of rel in folder d, moving aside whatever is there first.
func (w *safeWriter) clear(d *os.Root, rel string) error {
	if w.j.inFresh(rel) {
		return nil // a folder this restore made holds only what it wrote, and rel once
	}
	name := path.Base(rel)
	_, err := d.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return w.j.creating(rel, false)
	}
	if err != nil {
		return fmt.Errorf("replace %s: %w", rel, err)
	}
	aside, err := w.j.aside(rel)
	if err != nil {
		return err
	}
	if err := d.Rename(name, path.Base(aside)); err != nil {
		return fmt.Errorf("replace %s: %w", rel, err)
	}
	return nil
}

func (w *safeWriter) symlink(rel, target string) error {
	d, err := w.dir(path.Dir(rel))
	if err != nil {
		return err
	}
	if err := w.clear(d, rel); err != nil {
		return err
	}
	if err := d.Symlink(target, path.Base(rel)); err != nil {
		if errors.Is(err, fs.ErrExist) {
			_ = w.j.notCreated(rel, false)
		}
		return err
	}
	w.j.changed(rel)
	return nil
}

// file writes one regular file from src, checking its content against the recorded hash. On an
// error the file stays for the rollback to remove.
func (w *safeWriter) file(rel string, f store.OutputFile, src io.Reader) error {
	d, err := w.dir(path.Dir(rel))
	if err != nil {
		return err
	}
	if err := w.clear(d, rel); err != nil {
		return err
	}
	out, err := d.OpenFile(path.Base(rel), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			// Made by someone else since clear looked: not this restore's to roll back.
			_ = w.j.notCreated(rel, false)
		}
		return err
	}
	sum := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, sum), io.LimitReader(src, f.Size+1))
	if err == nil && (n != f.Size || hex.EncodeToString(sum.Sum(nil)) != f.Hash) {
		err = fmt.Errorf("%w: %s does not have its recorded content", errBadEntry, rel)
	}
	if err == nil {
		err = out.Chmod(os.FileMode(f.Mode).Perm())
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	w.j.changed(rel)
	return nil
}
