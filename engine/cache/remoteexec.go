package cache

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vzn/vx/engine/executor"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/remote"
	"github.com/vzn/vx/engine/store"
)

// PutRemote makes task t's entry under key from what a remote execution made: outputs by digest
// (already in the local blob store, each checked as it was written) and the log. It stores the
// entry as Put does when store is set (locally, and uploaded to the remote cache), and in every
// case restores it into the workspace through the restore of every hit: only the task's declared
// outputs, never through a link, each file's hash checked, stale outputs removed. An output the
// task does not declare is refused by name and nothing is written. It answers the log's blob.
func (c *Cache) PutRemote(ctx context.Context, t *graph.Task, key string, log []byte, took time.Duration,
	outputs []executor.RemoteOutput, store bool) (string, error) {
	p, found := c.ws.Project(t.Project)
	if !found {
		return "", fmt.Errorf("task %s: no project %s", t.ID, t.Project)
	}
	archive, files, err := c.remoteArchive(p, t, outputs)
	if err != nil {
		return "", err
	}
	outputsBlob, logBlob, size, err := c.putBlobs(archive, log)
	if err != nil {
		return "", err
	}
	now := c.now()
	entry := storeEntry(key, t, outputsBlob, files, logBlob, size, took, now, c.ws.Root)
	blob := func() ([]byte, error) { return c.st.CAS().GetBounded(entry.OutputsBlob, entry.Size) }
	if _, err := extract(ctx, c.ws, p, t, files, blob, c.matches, c.journal(t), c.tree()); err != nil {
		return "", fmt.Errorf("restore the remote outputs of %s: %w", t.ID, err)
	}
	if !store {
		return logBlob, nil
	}
	if c.use.LocalWrite() {
		if err := c.st.PutEntry(context.WithoutCancel(ctx), entry); err != nil {
			return logBlob, err
		}
	}
	if c.remote.writes() && c.use.RemoteWrite() {
		c.remote.upload(ctx, entry.Hash, remote.MetaOf(entry, int64(len(archive)), int64(len(log))))
	}
	return logBlob, nil
}

// storeEntry is the entry of a task's outputs and log.
func storeEntry(key string, t *graph.Task, outputsBlob string, files []store.OutputFile, logBlob string, size int64,
	took time.Duration, now time.Time, checkout string) store.Entry {
	return store.Entry{Hash: key, TaskID: t.ID, Project: t.Project, Command: t.Command,
		OutputsBlob: outputsBlob, Outputs: files, LogBlob: logBlob, Size: size, Duration: took,
		Created: now, LastUsed: now, Checkout: checkout}
}

// remoteArchive packs remote outputs (root-relative, their contents in the local blob store) as
// the archive and listing archive makes of outputs on disk; nil for none.
func (c *Cache) remoteArchive(p *graph.Project, t *graph.Task, outputs []executor.RemoteOutput) ([]byte, []store.OutputFile, error) {
	if len(outputs) == 0 {
		return nil, nil, nil
	}
	o, err := newOutputSet(c.ws, p, t)
	if err != nil {
		return nil, nil, err
	}
	sorted := slices.Clone(outputs)
	slices.SortFunc(sorted, func(a, b executor.RemoteOutput) int { return strings.Compare(a.Path, b.Path) })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	files := make([]store.OutputFile, 0, len(sorted))
	for _, ro := range sorted {
		if !clean(ro.Path) || !o.allowed(ro.Path) {
			return nil, nil, fmt.Errorf("remote output %s of %s is not one of its declared outputs", ro.Path, t.ID)
		}
		name := o.archiveName(ro.Path)
		f := store.OutputFile{Path: name, Mode: 0o644}
		hdr := &tar.Header{Name: name, Format: tar.FormatGNU}
		var content []byte
		if ro.Link != "" {
			f.Link, hdr.Typeflag, hdr.Linkname = ro.Link, tar.TypeSymlink, ro.Link
			f.Mode = 0o777
		} else {
			if content, err = c.st.CAS().GetBounded(ro.Hash, ro.Size); err != nil {
				return nil, nil, fmt.Errorf("remote output %s of %s: %w", ro.Path, t.ID, err)
			}
			if ro.Executable {
				f.Mode = 0o755
			}
			f.Size, f.Hash, hdr.Typeflag, hdr.Size = ro.Size, ro.Hash, tar.TypeReg, ro.Size
		}
		hdr.Mode = int64(f.Mode)
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
	return c.enc.EncodeAll(buf.Bytes(), nil), files, nil
}
