//go:build unix

package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/vzn/vx/engine/store"
)

// safeWriter writes restored outputs beneath the workspace root, never through a symlink, with
// the fewest syscalls: each folder on a path is opened once, relative to its parent and without
// following a link (O_NOFOLLOW; made where missing), and each file is created by name inside its
// folder (O_CREAT|O_EXCL, which fails on anything already there, a symlink too). Every change is
// journaled first (journal.go): a folder or file it creates, and anything already at a file's
// place, which is renamed aside in its folder rather than overwritten, so that a rollback puts it
// back. A file is created with its recorded mode, which is set again on the open file only where
// the umask took bits from it.
type safeWriter struct {
	root  int
	dirs  map[string]int // folders already checked, open
	j     *journal
	umask int // the process's umask, -1 when it cannot be read
}

// copyBuffers are the buffers files are restored through.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// newOutputWriter answers the writer of restored outputs beneath root, journaling into j.
func newOutputWriter(root string, j *journal) (*safeWriter, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", root, err)
	}
	return &safeWriter{root: fd, dirs: map[string]int{}, j: j, umask: umaskOnce()}, nil
}

// umaskOnce is processUmask, read once for the process (vx never changes its umask).
var umaskOnce = sync.OnceValue(processUmask)

// processUmask reads the umask from /proc/self/status (Linux 4.7 and later): setting it to read it
// back would race with the files other goroutines create. Elsewhere it answers -1.
func processUmask() int {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "Umask:"); ok {
			if n, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
				return int(n)
			}
		}
	}
	return -1
}

// close closes the folders the writer opened, and its root.
func (w *safeWriter) close() {
	for _, fd := range w.dirs {
		unix.Close(fd)
	}
	unix.Close(w.root)
}

// dir answers the open folder rel (root-relative, "." for the root), making it and the folders
// above it where missing; none may be a symlink.
func (w *safeWriter) dir(rel string) (int, error) {
	if rel == "." {
		return w.root, nil
	}
	if fd, ok := w.dirs[rel]; ok {
		return fd, nil
	}
	parent, err := w.dir(path.Dir(rel))
	if err != nil {
		return -1, err
	}
	base, err := component(rel)
	if err != nil {
		return -1, err
	}
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(parent, base, flags, 0)
	if errors.Is(err, unix.ENOENT) {
		if err := w.j.creating(rel, true); err != nil {
			return -1, err
		}
		if err := unix.Mkdirat(parent, base, 0o755); err != nil {
			if !errors.Is(err, unix.EEXIST) {
				return -1, fmt.Errorf("make %s: %w", rel, err)
			}
			if err := w.j.notCreated(rel, true); err != nil {
				return -1, err
			}
		}
		fd, err = unix.Openat(parent, base, flags, 0)
	}
	if errors.Is(err, unix.ENOTDIR) {
		// O_DIRECTORY|O_NOFOLLOW on a symlink answers ENOTDIR on Linux: tell the two apart.
		var st unix.Stat_t
		if unix.Fstatat(parent, base, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			err = unix.ELOOP
		}
	}
	switch {
	case errors.Is(err, unix.ELOOP):
		return -1, fmt.Errorf("%s is a symlink: vx never restores through one", rel)
	case errors.Is(err, unix.ENOTDIR):
		return -1, fmt.Errorf("%s is a file where the outputs need a folder", rel)
	case err != nil:
		return -1, fmt.Errorf("open %s: %w", rel, err)
	}
	w.dirs[rel] = fd
	return fd, nil
}

// component answers the last element of a root-relative path, refusing one that would leave its
// folder.
func component(rel string) (string, error) {
	base := path.Base(rel)
	if base == ".." || base == "." || base == "/" || strings.Contains(rel, "\x00") {
		return "", fmt.Errorf("%w: %q is not a path inside the workspace", errBadEntry, rel)
	}
	return base, nil
}

// clear journals the creation of rel in folder d (name), moving aside whatever is there first.
func (w *safeWriter) clear(d int, rel, name string) error {
	if w.j.inFresh(rel) {
		return nil // a folder this restore made holds only what it wrote, and rel once
	}
	var st unix.Stat_t
	err := unix.Fstatat(d, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return w.j.creating(rel, false)
	}
	if err != nil {
		return fmt.Errorf("replace %s: %w", rel, err)
	}
	aside, err := w.j.aside(rel)
	if err != nil {
		return err
	}
	if err := unix.Renameat(d, name, d, path.Base(aside)); err != nil {
		return fmt.Errorf("replace %s: %w", rel, err)
	}
	return nil
}

func (w *safeWriter) symlink(rel, target string) error {
	d, err := w.dir(path.Dir(rel))
	if err != nil {
		return err
	}
	name, err := component(rel)
	if err != nil {
		return err
	}
	if err := w.clear(d, rel, name); err != nil {
		return err
	}
	if err := unix.Symlinkat(target, d, name); err != nil {
		if errors.Is(err, unix.EEXIST) {
			_ = w.j.notCreated(rel, false)
		}
		return fmt.Errorf("link %s: %w", rel, err)
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
	name, err := component(rel)
	if err != nil {
		return err
	}
	if err := w.clear(d, rel, name); err != nil {
		return err
	}
	const flags = unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_CLOEXEC
	mode := f.Mode & 0o777
	fd, err := unix.Openat(d, name, flags, mode)
	if err != nil {
		if errors.Is(err, unix.EEXIST) {
			// Made by someone else since clear looked: not this restore's to roll back.
			_ = w.j.notCreated(rel, false)
		}
		return fmt.Errorf("create %s: %w", rel, err)
	}
	sum := sha256.New()
	buf := copyBuffers.Get().(*[]byte)
	n, err := io.CopyBuffer(io.MultiWriter(fdWriter(fd), sum), io.LimitReader(src, f.Size+1), *buf)
	copyBuffers.Put(buf)
	if err == nil && (n != f.Size || hex.EncodeToString(sum.Sum(nil)) != f.Hash) {
		err = fmt.Errorf("%w: %s does not have its recorded content", errBadEntry, rel)
	}
	if err == nil && (w.umask < 0 || mode&^uint32(w.umask) != mode) {
		err = unix.Fchmod(fd, mode)
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	w.j.changed(rel)
	return nil
}

// fdWriter writes to a file descriptor.
type fdWriter int

func (fd fdWriter) Write(p []byte) (int, error) {
	written := 0
	for written < len(p) {
		n, err := unix.Write(int(fd), p[written:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return written, err
		}
		written += n
	}
	return written, nil
}
