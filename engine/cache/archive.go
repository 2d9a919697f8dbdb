package cache

import (
	"archive/tar"
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/store"
)

// archive packs the task's declared outputs as a tar.zst archive and lists them. No outputs
// declared (or none found) answers a nil archive. A symlink is archived as a symlink, never
// followed; one that may not be an output (linkRefusal) makes the task not cached, with the
// reason.
func (c *Cache) archive(p *graph.Project, t *graph.Task) ([]byte, []store.OutputFile, error) {
	if len(t.Outputs) == 0 {
		return nil, nil, nil
	}
	o, err := newOutputSet(c.ws, p, t)
	if err != nil {
		return nil, nil, err
	}
	paths, err := o.list()
	if err != nil {
		return nil, nil, fmt.Errorf("outputs of %s: %w", t.ID, err)
	}
	if len(paths) == 0 {
		return nil, nil, nil
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	files := make([]store.OutputFile, 0, len(paths))
	var links map[string]string // root-relative path → target
	for _, rel := range paths {
		abs := filepath.Join(o.root, filepath.FromSlash(rel))
		name := o.archiveName(rel)
		fi, err := os.Lstat(abs)
		if err != nil {
			return nil, nil, fmt.Errorf("output %s of %s: %w", name, t.ID, err)
		}
		f := store.OutputFile{Path: name, Mode: uint32(fi.Mode().Perm())}
		// GNU headers: long names and links and any UTF-8 fit, and Go's reader parses them without
		// the byte-by-byte USTAR check it makes of PAX ones (a tenth of a restore's CPU).
		hdr := &tar.Header{Name: name, Mode: int64(fi.Mode().Perm()), Format: tar.FormatGNU}
		var content []byte
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			if f.Link, err = os.Readlink(abs); err != nil {
				return nil, nil, fmt.Errorf("output %s of %s: %w", name, t.ID, err)
			}
			if links == nil {
				links = map[string]string{}
			}
			links[rel] = f.Link
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, f.Link
		case fi.Mode().IsRegular():
			if content, err = os.ReadFile(abs); err != nil {
				return nil, nil, fmt.Errorf("output %s of %s: %w", name, t.ID, err)
			}
			f.Size = int64(len(content))
			f.Hash = hasher.HashBytes(content)
			hdr.Typeflag, hdr.Size = tar.TypeReg, f.Size
		default:
			continue // a socket, a fifo, a device: not an output vx can carry
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, nil, fmt.Errorf("archive outputs of %s: %w", t.ID, err)
		}
		if _, err := tw.Write(content); err != nil {
			return nil, nil, fmt.Errorf("archive outputs of %s: %w", t.ID, err)
		}
		files = append(files, f)
	}
	if rel, why := o.linkRefusals(links); why != "" {
		// Never an entry others restore: the task is not cached, with the reason.
		return nil, nil, errLinkOut(o.archiveName(rel), links[rel], why)
	}
	if err := tw.Close(); err != nil {
		return nil, nil, fmt.Errorf("archive outputs of %s: %w", t.ID, err)
	}
	if len(files) == 0 {
		return nil, nil, nil
	}
	return c.enc.EncodeAll(buf.Bytes(), nil), files, nil
}
