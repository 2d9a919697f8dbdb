package cache

import (
	"context"
	"fmt"
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
	archive, files, err := c.remoteArchive(ctx, p, t, outputs)
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
		m := remote.MetaOf(entry, int64(len(archive)), int64(len(log)))
		// The engine holds each file: a REAPI remote cache that is the same server keeps the
		// entry by them too, so that a run that wants none of them downloads nothing.
		m.FilesInCAS = c.keepsFiles() && len(files) > 0
		c.remote.upload(ctx, entry.Hash, m)
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

// remoteArchive packs remote outputs (root-relative, their contents in the local blob store or
// fetched into it from the run's REAPI server) as the archive and listing archive makes of
// outputs on disk; nil for none.
func (c *Cache) remoteArchive(ctx context.Context, p *graph.Project, t *graph.Task, outputs []executor.RemoteOutput) ([]byte, []store.OutputFile, error) {
	if len(outputs) == 0 {
		return nil, nil, nil
	}
	files, err := c.listingOf(p, t, outputs)
	if err != nil {
		return nil, nil, err
	}
	if err := c.fetchFiles(ctx, files); err != nil {
		return nil, nil, fmt.Errorf("remote outputs of %s: %w", t.ID, err)
	}
	archive, err := c.pack(t, files)
	return archive, files, err
}

// KeepsRemote reports whether the outputs of task id, run remotely and cached, stay remote
// (PutRemoteKept): the run does not want them and writes the local store.
func (c *Cache) KeepsRemote(id string) bool { return !c.wants(id) && c.use.LocalWrite() }

// PutRemoteKept stores task t's entry under key from what a remote execution made, its outputs
// left in the engine's CAS: the listing (each output checked against the task's declared
// outputs, refused by name otherwise) and the log, kept locally, and uploaded to a remote cache
// that keeps files by digest. Nothing is written into the workspace. It answers the log's blob.
func (c *Cache) PutRemoteKept(ctx context.Context, t *graph.Task, key string, log []byte, took time.Duration,
	outputs []executor.RemoteOutput) (string, error) {
	p, found := c.ws.Project(t.Project)
	if !found {
		return "", fmt.Errorf("task %s: no project %s", t.ID, t.Project)
	}
	files, err := c.listingOf(p, t, outputs)
	if err != nil {
		return "", err
	}
	_, logBlob, size, err := c.putBlobs(nil, log)
	if err != nil {
		return "", err
	}
	entry := storeEntry(key, t, "", files, logBlob, size, took, c.now(), c.ws.Root)
	if err := c.st.PutEntry(context.WithoutCancel(ctx), entry); err != nil {
		return logBlob, err
	}
	if c.remote.writes() && c.use.RemoteWrite() && c.keepsFiles() {
		c.remote.upload(ctx, entry.Hash, remote.MetaOf(entry, 0, int64(len(log))))
	}
	return logBlob, nil
}
