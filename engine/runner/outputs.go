package runner

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/store"
)

// archive packs the task's declared outputs as a tar.zst archive and lists them. No outputs
// declared (or none found) answers a nil archive.
func (r *runState) archive(p *graph.Project, t *graph.Task) ([]byte, []store.OutputFile, error) {
	if len(t.Outputs) == 0 {
		return nil, nil, nil
	}
	paths, err := hasher.GlobFiles(p.AbsDir, t.Outputs)
	if err != nil {
		return nil, nil, fmt.Errorf("outputs of %s: %w", t.ID, err)
	}
	if len(paths) == 0 {
		return nil, nil, nil
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	files := make([]store.OutputFile, 0, len(paths))
	for _, rel := range paths {
		abs := filepath.Join(p.AbsDir, filepath.FromSlash(rel))
		fi, err := os.Lstat(abs)
		if err != nil {
			return nil, nil, fmt.Errorf("output %s of %s: %w", rel, t.ID, err)
		}
		f := store.OutputFile{Path: rel, Mode: uint32(fi.Mode().Perm())}
		hdr := &tar.Header{Name: rel, Mode: int64(fi.Mode().Perm()), Format: tar.FormatPAX}
		var content []byte
		if fi.Mode()&os.ModeSymlink != 0 {
			if f.Link, err = os.Readlink(abs); err != nil {
				return nil, nil, fmt.Errorf("output %s of %s: %w", rel, t.ID, err)
			}
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, f.Link
		} else {
			if content, err = os.ReadFile(abs); err != nil {
				return nil, nil, fmt.Errorf("output %s of %s: %w", rel, t.ID, err)
			}
			f.Size = int64(len(content))
			f.Hash = hasher.HashBytes(content)
			hdr.Typeflag, hdr.Size = tar.TypeReg, f.Size
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, nil, fmt.Errorf("archive outputs of %s: %w", t.ID, err)
		}
		if _, err := tw.Write(content); err != nil {
			return nil, nil, fmt.Errorf("archive outputs of %s: %w", t.ID, err)
		}
		files = append(files, f)
	}
	if err := tw.Close(); err != nil {
		return nil, nil, fmt.Errorf("archive outputs of %s: %w", t.ID, err)
	}
	return r.enc.EncodeAll(buf.Bytes(), nil), files, nil
}

// restore brings a hit's outputs back where they differ from the archive and answers its log.
// ok is false when a blob is missing or corrupt, or a file could not be written: then the task runs.
func (r *runState) restore(ctx context.Context, p *graph.Project, e store.Entry) (log []byte, ok bool) {
	log, err := r.st.CAS().Get(e.LogBlob)
	if err != nil {
		return nil, false
	}
	stale := map[string]bool{}
	for _, f := range e.Outputs {
		if !r.matches(p, f) {
			stale[f.Path] = true
		}
	}
	if len(stale) == 0 {
		return log, true
	}
	blob, err := r.st.CAS().Get(e.OutputsBlob)
	if err != nil {
		return nil, false
	}
	raw, err := r.dec.DecodeAll(blob, nil)
	if err != nil {
		return nil, false
	}
	defer r.hasher.Invalidate(p.Dir)
	tr := tar.NewReader(bytes.NewReader(raw))
	for {
		if ctx.Err() != nil {
			return nil, false
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, false
		}
		if !stale[hdr.Name] {
			continue
		}
		if err := writeOutput(p.AbsDir, hdr, tr); err != nil {
			r.display.notice(e.TaskID, fmt.Sprintf("vx: restore %s: %v", hdr.Name, err))
			return nil, false
		}
	}
	return log, true
}

// matches reports whether the output on disk is the archived one.
func (r *runState) matches(p *graph.Project, f store.OutputFile) bool {
	abs := filepath.Join(p.AbsDir, filepath.FromSlash(f.Path))
	fi, err := os.Lstat(abs)
	if err != nil {
		return false
	}
	if f.Link != "" {
		target, err := os.Readlink(abs)
		return err == nil && target == f.Link
	}
	if !fi.Mode().IsRegular() || fi.Size() != f.Size || uint32(fi.Mode().Perm()) != f.Mode {
		return false
	}
	sum, err := r.hasher.FileHash(joinRel(p.Dir, f.Path))
	return err == nil && sum == f.Hash
}

func joinRel(dir, rel string) string {
	if dir == "." || dir == "" {
		return rel
	}
	return dir + "/" + rel
}

// writeOutput writes one archived file under dir through a temporary file and a rename.
func writeOutput(dir string, hdr *tar.Header, src io.Reader) error {
	clean := path.Clean(hdr.Name)
	if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return fmt.Errorf("archive path %q leaves the project", hdr.Name)
	}
	dst := filepath.Join(dir, filepath.FromSlash(clean))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	switch hdr.Typeflag {
	case tar.TypeSymlink:
		_ = os.Remove(dst)
		return os.Symlink(hdr.Linkname, dst)
	case tar.TypeReg:
		tmp, err := os.CreateTemp(filepath.Dir(dst), ".vx-restore-*")
		if err != nil {
			return err
		}
		_, err = io.Copy(tmp, src)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(tmp.Name(), os.FileMode(hdr.Mode).Perm())
		}
		if err == nil {
			err = os.Rename(tmp.Name(), dst)
		}
		if err != nil {
			os.Remove(tmp.Name())
		}
		return err
	default:
		return nil
	}
}
