package remote

import (
	"context"
	"errors"
	"fmt"

	pb "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"

	"github.com/vzn/vx/engine/store"
)

// arFilesPrefix is the folder of an entry's ActionResult under which the output files of an
// entry whose outputs stayed remote are named (Meta.FilesInCAS): an engine that checks an
// ActionResult's blobs before it answers it then answers none whose files it lost.
const arFilesPrefix = "vx-files/"

// KeepsFiles reports that a REAPI server keeps an entry's output files by their digests in its
// CAS, so that an entry whose outputs stayed remote may be stored there.
func (c *reapiCache) KeepsFiles() bool { return true }

// Download brings the blobs named (Hash and Size) from the server's CAS into the local blob store
// cas, each checked against its digest as it is written; a blob the server lacks is
// ErrBlobMissing.
func (c *reapiCache) Download(ctx context.Context, cas *store.CAS, blobs []Blob) error {
	return (&REAPI{c: c}).Download(ctx, cas, blobs)
}

// checkFiles refuses a files-in-CAS entry whose listing names a file without a digest.
// An entry may have both its files in the CAS and its archive (a remote task whose outputs came
// back): a reader takes it as one whose outputs stayed remote, fetching the files it wants.
func (m Meta) checkFiles() error {
	for _, f := range m.Outputs {
		if f.Link == "" && (f.Size < 0 || f.Size > MaxBlobBytes || f.Size > 0 && !isDigest(f.Hash)) {
			return fmt.Errorf("%w: output %s has no digest", ErrCorrupt, f.Path)
		}
	}
	return nil
}

// heldFiles answers the output files an entry's ActionResult names by digest (none unless
// m.FilesInCAS) and the Meta to store: an entry that also has its archive is stored without
// FilesInCAS when the server lacks one of its files (another server made them), while one with
// no archive is not stored then.
func (c *reapiCache) heldFiles(ctx context.Context, m Meta) ([]*pb.OutputFile, Meta, error) {
	if !m.FilesInCAS {
		return nil, m, nil
	}
	files, err := c.filesHeld(ctx, m)
	if err != nil && m.OutputsBlob != "" && errors.Is(err, errFilesMissing) {
		m.FilesInCAS = false
		return nil, m, nil
	}
	return files, m, err
}

// errFilesMissing is an entry's output files the server's CAS lacks.
var errFilesMissing = errors.New("the server lacks output files of the entry")

// filesHeld answers the output files of a files-in-CAS entry's ActionResult, once the server
// says it holds every one of their blobs: an entry naming a blob the server lacks is not stored.
func (c *reapiCache) filesHeld(ctx context.Context, m Meta) ([]*pb.OutputFile, error) {
	if err := m.checkFiles(); err != nil {
		return nil, err
	}
	var blobs []blob
	var out []*pb.OutputFile
	for _, f := range m.Outputs {
		if f.Link != "" {
			continue
		}
		if f.Size > 0 {
			blobs = append(blobs, blob{d: digest{f.Hash, f.Size}})
		}
		out = append(out, &pb.OutputFile{Path: arFilesPrefix + f.Path, Digest: &pb.Digest{Hash: f.Hash, SizeBytes: f.Size},
			IsExecutable: f.Mode&0o111 != 0})
	}
	if len(blobs) == 0 {
		return out, nil
	}
	missing, err := c.findMissing(ctx, blobs)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: %w (%d)", c.target, errFilesMissing, len(missing))
	}
	return out, nil
}
