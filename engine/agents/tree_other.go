//go:build !unix

package agents

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/vzn/vx/engine/atomicfile"
)

// readFile reads the file at rel below root, refusing a link at any component below root (checked
// with Lstat before opening: this platform has no O_NOFOLLOW).
func readFile(root, rel string) (current, error) {
	abs, err := walk(root, rel, false)
	if errors.Is(err, fs.ErrNotExist) {
		return current{}, nil
	}
	if err != nil {
		return current{}, err
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return current{}, fmt.Errorf("read %s: %w", rel, err)
	}
	fi, err := os.Lstat(abs)
	if err != nil {
		return current{}, fmt.Errorf("stat %s: %w", rel, err)
	}
	return current{data: data, mode: fi.Mode().Perm(), exists: true}, nil
}

// writeFile replaces the file at rel below root atomically with data and mode, making the folders
// it needs and refusing a link at any component.
func writeFile(root, rel string, data []byte, mode fs.FileMode) error {
	abs, err := walk(root, rel, true)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := atomicfile.WriteFile(abs, data, atomicfile.Perm(mode)); err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	return nil
}

// walk checks each component of rel below root with Lstat, making missing folders when create is
// set, and returns the file's absolute path; a missing file is an error matching fs.ErrNotExist.
func walk(root, rel string, create bool) (string, error) {
	names, err := components(rel)
	if err != nil {
		return "", err
	}
	abs := root
	for i, name := range names {
		abs = filepath.Join(abs, name)
		sub := strings.Join(names[:i+1], "/")
		last := i == len(names)-1
		fi, err := os.Lstat(abs)
		if errors.Is(err, fs.ErrNotExist) && create && !last {
			if err = os.Mkdir(abs, 0o755); err == nil {
				continue
			}
		}
		switch {
		case err != nil:
			return abs, fmt.Errorf("stat %s: %w", sub, err)
		case fi.Mode()&fs.ModeSymlink != 0:
			return "", linkError(sub)
		case !last && !fi.IsDir():
			return "", fmt.Errorf("%s is not a folder", sub)
		case last && !fi.Mode().IsRegular():
			return "", describe(sub, fi.Mode())
		}
	}
	return abs, nil
}
