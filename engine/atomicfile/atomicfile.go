// Package atomicfile writes a file so that a reader sees the old content or the new, never a torn
// one, and a crash leaves one of the two on disk: the data goes to a temporary file in the target's
// folder, which is synced, renamed over the target (or linked to it, see NoReplace), and then the
// folder is synced so the new name outlives a crash as well (a power cut, unless Unsynced).
package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// tempSuffix ends the name of every temporary file; the name starts with a dot and the target's
// name, so a leftover of an interrupted write says what it was for.
const tempSuffix = ".tmp"

// Option changes how WriteFile and Write write.
type Option func(*options)

type options struct {
	perm      fs.FileMode
	setPerm   bool
	noReplace bool
	noSync    bool
}

// Perm gives the file exactly these permission bits, whatever the umask. Without it the file is
// private to its owner (0600, less the umask), as os.CreateTemp makes it.
func Perm(perm fs.FileMode) Option {
	return func(o *options) { o.perm, o.setPerm = perm.Perm(), true }
}

// NoReplace keeps a file already at the target: the new one is linked into place rather than
// renamed, so of two processes writing it at once the first one wins, and the other gets an error
// that matches fs.ErrExist.
func NoReplace() Option {
	return func(o *options) { o.noReplace = true }
}

// Unsynced leaves the file and its folder unsynced: a reader still never sees a torn file, and a
// process that dies leaves the old content or the new, but a power cut may leave the name with
// content that is neither. For a file whose every read checks its content against its name (a
// content-addressed blob), where such a file reads as missing.
func Unsynced() Option {
	return func(o *options) { o.noSync = true }
}

// WriteFile writes data to path atomically. The folder must exist.
func WriteFile(path string, data []byte, opts ...Option) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, opts...)
}

// Write writes to path atomically what write writes to the writer it is given. The folder must
// exist. When write fails nothing at path changes and the temporary file is removed.
func Write(path string, write func(io.Writer) error, opts ...Option) error {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*"+tempSuffix)
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if !renamed {
			os.Remove(tmp.Name()) // after a link, the second name
		}
	}()
	err = write(tmp)
	if err == nil && o.setPerm {
		err = tmp.Chmod(o.perm)
	}
	if err == nil && !o.noSync {
		err = tmp.Sync()
	}
	if err = errors.Join(err, tmp.Close()); err != nil {
		return err
	}
	if o.noReplace {
		err = os.Link(tmp.Name(), path)
	} else {
		err = os.Rename(tmp.Name(), path)
		renamed = err == nil
	}
	if err != nil || o.noSync {
		return err
	}
	return syncDir(dir)
}

// IsTemp reports whether a file name is that of a temporary file Write made: a leftover when the
// process died before renaming it.
func IsTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.HasSuffix(name, tempSuffix)
}
