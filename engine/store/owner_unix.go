//go:build unix

package store

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// CheckSharedFolder refuses a shared store folder that another user owns or that others may write:
// anyone who may write it may plant an entry every checkout restores. The folder is the one its
// path leads to, through any symlink (a symlinked home or cache folder is fine).
func CheckSharedFolder(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("shared store %s belongs to another user (uid %d, you are uid %d): "+
			"give vx a store of your own with --cache-dir or VX_CACHE_DIR, or chown it", dir, st.Uid, os.Geteuid())
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("shared store %s is writable by others (mode %v): run chmod go-w %s, "+
			"or move the store with --cache-dir or VX_CACHE_DIR", dir, fi.Mode().Perm(), dir)
	}
	return nil
}

// makeSharedFolder creates dir and any missing parent as the owner's alone to write (0755,
// whatever the umask lets through otherwise).
func makeSharedFolder(dir string) error {
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return nil
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := makeSharedFolder(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		if os.IsExist(err) {
			return nil
		}
		return err
	}
	return os.Chmod(dir, 0o755)
}
