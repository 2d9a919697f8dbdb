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
	"strconv"

	"github.com/vzn/vx/engine/store"
)

// newOutputWriter answers the writer of restored outputs beneath root.
func newOutputWriter(root string) (*safeWriter, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	return &safeWriter{root: r}, nil
}

// safeWriter writes restored outputs beneath the workspace root, never through a symlink: every
// folder on a path is checked (and made) without following links, and opened once, so that each
// file is then written by name inside its folder (a few syscalls a file, whatever its depth): to
// a temporary name, its mode set on the open file, and renamed over the target.
type safeWriter struct {
	root *os.Root
	dirs map[string]*os.Root // folders already checked, open
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
		if err := parent.Mkdir(base, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
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

func (w *safeWriter) symlink(rel, target string) error {
	d, err := w.dir(path.Dir(rel))
	if err != nil {
		return err
	}
	name := path.Base(rel)
	if err := d.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return d.Symlink(target, name)
}

// file writes one regular file from src, checking its content against the recorded hash.
func (w *safeWriter) file(rel string, f store.OutputFile, src io.Reader) error {
	d, err := w.dir(path.Dir(rel))
	if err != nil {
		return err
	}
	var tmpName string
	var tmp *os.File
	for i := 0; ; i++ {
		tmpName = ".vx-restore-" + strconv.Itoa(os.Getpid()) + "-" + strconv.Itoa(i)
		tmp, err = d.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i > 100 {
			return err
		}
	}
	sum := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, sum), io.LimitReader(src, f.Size+1))
	if err == nil && (n != f.Size || hex.EncodeToString(sum.Sum(nil)) != f.Hash) {
		err = fmt.Errorf("%w: %s does not have its recorded content", errBadEntry, rel)
	}
	if err == nil {
		err = tmp.Chmod(os.FileMode(f.Mode).Perm())
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = d.Rename(tmpName, path.Base(rel))
	}
	if err != nil {
		_ = d.Remove(tmpName)
	}
	return err
}
