//go:build unix

package agents

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// readFile reads the file at rel below root, opening every folder on the way and the file itself
// without following a symbolic link: a link anywhere below root is refused, naming it. A file
// that does not exist (or whose folder does not) reads as not existing.
func readFile(root, rel string) (current, error) {
	names, err := components(rel)
	if err != nil {
		return current{}, err
	}
	dir, err := openDirs(root, names[:len(names)-1], false)
	if errors.Is(err, fs.ErrNotExist) {
		return current{}, nil
	}
	if err != nil {
		return current{}, err
	}
	defer unix.Close(dir)
	base := names[len(names)-1]
	fd, err := unix.Openat(dir, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	switch {
	case err == unix.ENOENT:
		return current{}, nil
	case err != nil:
		return current{}, classify(dir, base, rel, err)
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	mode, err := checkFile(f, rel)
	if err != nil {
		return current{}, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return current{}, fmt.Errorf("read %s: %w", rel, err)
	}
	return current{data: data, mode: mode, exists: true}, nil
}

// checkFile refuses an open file that is not a regular file or that has another name (a hard
// link), and returns its permission bits.
func checkFile(f *os.File, rel string) (fs.FileMode, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return 0, fmt.Errorf("stat %s: %w", rel, err)
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("stat %s: %w", rel, err)
	}
	if !fi.Mode().IsRegular() {
		return 0, describe(rel, fi.Mode())
	}
	if n := uint64(st.Nlink); n > 1 {
		return 0, hardLinkError(rel, n)
	}
	return fi.Mode().Perm(), nil
}

// writeFile replaces the file at rel below root with data and the permission bits mode, creating
// the folders it needs: every folder on the way is opened without following a link, the data goes
// to a new temporary file beside the target, and that file is renamed over it. The rename replaces
// the name, never writes into the file it named, so a hard link's other names keep their content.
func writeFile(root, rel string, data []byte, mode fs.FileMode) error {
	names, err := components(rel)
	if err != nil {
		return err
	}
	dir, err := openDirs(root, names[:len(names)-1], true)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	base := names[len(names)-1]
	if err := checkTarget(dir, base, rel); err != nil {
		return err
	}
	tmp, err := createTemp(dir, base)
	if err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	if err := fill(tmp, data, mode); err != nil {
		_ = unix.Unlinkat(dir, tmp.Name(), 0)
		return fmt.Errorf("write %s: %w", rel, err)
	}
	if err := unix.Renameat(dir, tmp.Name(), dir, base); err != nil {
		_ = unix.Unlinkat(dir, tmp.Name(), 0)
		return fmt.Errorf("write %s: %w", rel, err)
	}
	if err := unix.Fsync(dir); err != nil {
		return fmt.Errorf("write %s: sync its folder: %w", rel, err)
	}
	return nil
}

// checkTarget refuses to replace a name that is a link, a folder or a file with other names.
func checkTarget(dir int, base, rel string) error {
	var st unix.Stat_t
	err := unix.Fstatat(dir, base, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case err == unix.ENOENT:
		return nil
	case err != nil:
		return fmt.Errorf("stat %s: %w", rel, err)
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return linkError(rel)
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return describe(rel, fileType(uint32(st.Mode)))
	case uint64(st.Nlink) > 1:
		return hardLinkError(rel, uint64(st.Nlink))
	}
	return nil
}

// createTemp makes a new file beside base in dir, named after it, that nothing else has open.
func createTemp(dir int, base string) (*os.File, error) {
	for range 16 {
		var suffix [6]byte
		_, _ = rand.Read(suffix[:])
		name := "." + base + "." + hex.EncodeToString(suffix[:]) + ".tmp"
		fd, err := unix.Openat(dir, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == unix.EEXIST {
			continue
		}
		if err != nil {
			return nil, err
		}
		return os.NewFile(uintptr(fd), name), nil
	}
	return nil, errors.New("no free temporary name")
}

// fill writes data to the temporary file, gives it mode, syncs and closes it.
func fill(f *os.File, data []byte, mode fs.FileMode) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// openDirs opens root, then each folder of names below it in turn without following a link. With
// create, a missing folder is made (0755 less the umask); without, a missing one is an error
// matching fs.ErrNotExist.
func openDirs(root string, names []string, create bool) (int, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open the workspace root %s: %w", root, err)
	}
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	for i, name := range names {
		rel := strings.Join(names[:i+1], "/")
		next, err := unix.Openat(fd, name, flags, 0)
		if err == unix.ENOENT && create {
			if err = unix.Mkdirat(fd, name, 0o755); err == nil || err == unix.EEXIST {
				next, err = unix.Openat(fd, name, flags, 0)
			}
		}
		if err != nil {
			if err != unix.ENOENT {
				err = classify(fd, name, rel, err)
			} else {
				err = fmt.Errorf("open %s: %w", rel, fs.ErrNotExist)
			}
			unix.Close(fd)
			return -1, err
		}
		unix.Close(fd)
		fd = next
	}
	return fd, nil
}

// classify turns the error of opening name in dir without following a link into one that names
// rel: a link is refused as such, whatever error the open gave for it.
func classify(dir int, name, rel string, openErr error) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return linkError(rel)
		}
		if openErr == unix.ENOTDIR {
			return fmt.Errorf("%s is not a folder", rel)
		}
	}
	return fmt.Errorf("open %s: %w", rel, openErr)
}

// fileType is the fs.FileMode type bits of a stat mode.
func fileType(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}
