package remoteexec

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// FileSource is where a file input's content is read from when the CAS lacks it: the workspace
// file it was hashed from.
type FileSource struct {
	Digest Digest
	Path   string // absolute
}

// InputsFromDisk makes the inputs of an input root from workspace files: paths (slash-separated,
// relative to root) are lstat'ed, never followed: a regular file is its content's digest and its
// executable bit, a symbolic link its target as written. Anything else (a folder, a device) is
// refused by name. It answers the sources of the file contents too.
func InputsFromDisk(root string, paths []string) ([]Input, []FileSource, error) {
	inputs := make([]Input, 0, len(paths))
	var sources []FileSource
	for _, p := range paths {
		if err := checkPath(p); err != nil {
			return nil, nil, err
		}
		abs := filepath.Join(root, filepath.FromSlash(p))
		fi, err := os.Lstat(abs)
		if err != nil {
			return nil, nil, fmt.Errorf("input %s: %w", p, err)
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(abs)
			if err != nil {
				return nil, nil, fmt.Errorf("input %s: %w", p, err)
			}
			inputs = append(inputs, Input{Path: p, Target: target})
		case fi.Mode().IsRegular():
			d, err := fileDigest(abs)
			if err != nil {
				return nil, nil, fmt.Errorf("input %s: %w", p, err)
			}
			inputs = append(inputs, Input{Path: p, Digest: d, Executable: fi.Mode()&0o111 != 0})
			sources = append(sources, FileSource{Digest: d, Path: abs})
		default:
			return nil, nil, fmt.Errorf("input %s is neither a file nor a link (%s)", p, fi.Mode().Type())
		}
	}
	return inputs, sources, nil
}

// fileDigest is the digest of a file's content, read through a descriptor that does not follow
// a link put in its place since the lstat.
func fileDigest(path string) (Digest, error) {
	f, err := openNoFollow(path)
	if err != nil {
		return Digest{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return Digest{}, err
	}
	return Digest{Hash: hex.EncodeToString(h.Sum(nil)), Size: n}, nil
}
