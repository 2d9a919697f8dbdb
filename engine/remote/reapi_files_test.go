package remote_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/remote"
	"github.com/vzn/vx/engine/store"
)

// TestREAPIFilesInCAS: an entry whose outputs stayed remote (no archive; its files by digest in
// the server's CAS) is stored only once the server holds every file, travels back without its
// files, and its files are then fetched by digest, checked. Against a real bazel-remote.
func TestREAPIFilesInCAS(t *testing.T) {
	srv := startBazelRemoteGRPC(t)
	cfg := &graph.RemoteCache{URL: srv.URL}
	c := reapiClient(t, cfg, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	local := store.NewCAS(t.TempDir())
	out, log := []byte("made on a worker\n"), []byte("built\n")
	outHash, logHash := digestHex(out), digestHex(log)
	if _, err := local.Put(log); err != nil {
		t.Fatal(err)
	}
	m := remote.Meta{Version: remote.MetaVersion, TaskID: "lib#build", FilesInCAS: true,
		Outputs: []store.OutputFile{{Path: "dist/out.txt", Size: int64(len(out)), Mode: 0o755, Hash: outHash},
			{Path: "dist/alias", Mode: 0o777, Link: "out.txt"}},
		LogBlob: logHash, LogSize: int64(len(log))}
	if err := c.Store(ctx, testKey, m, local); err == nil {
		t.Fatal("an entry whose files the server lacks was stored")
	}
	s, err := remote.Resolve(cfg, func(string) string { return "" }, "")
	if err != nil {
		t.Fatal(err)
	}
	engine, err := remote.DialREAPI(s)
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close()
	if err := engine.Upload(ctx, []remote.Blob{{Hash: outHash, Size: int64(len(out))}}); !errors.Is(err, remote.ErrBlobMissing) {
		t.Fatalf("a blob with no content the engine lacks: %v", err)
	}
	if err := engine.Upload(ctx, []remote.Blob{{Hash: outHash, Size: int64(len(out)), Data: out}}); err != nil {
		t.Fatal(err)
	}
	if err := engine.Upload(ctx, []remote.Blob{{Hash: outHash, Size: int64(len(out))}}); err != nil {
		t.Fatalf("a blob with no content the engine holds: %v", err)
	}
	if err := c.Store(ctx, testKey, m, local); err != nil {
		t.Fatal(err)
	}
	other := store.NewCAS(t.TempDir())
	got, ok, err := c.Fetch(ctx, testKey, other)
	if err != nil || !ok || !got.FilesInCAS || len(got.Outputs) != 2 || got.OutputsBlob != "" {
		t.Fatalf("fetch: %+v %v %v", got, ok, err)
	}
	if !other.Has(logHash) || other.Has(outHash) {
		t.Fatal("the fetch brought the files, or not the log")
	}
	fetcher, ok := c.(interface {
		Download(context.Context, *store.CAS, []remote.Blob) error
	})
	if !ok {
		t.Fatal("a REAPI cache fetches no files")
	}
	if err := fetcher.Download(ctx, other, []remote.Blob{{Hash: outHash, Size: int64(len(out))}}); err != nil {
		t.Fatal(err)
	}
	if data, err := other.GetBounded(outHash, int64(len(out))); err != nil || string(data) != string(out) {
		t.Fatalf("fetched file %q %v", data, err)
	}

	// An entry with its archive too travels back without it, its files fetched as wanted; one
	// whose files the server lacks is stored as its archive alone.
	archive := []byte("an outputs archive")
	archiveHash, err := local.Put(archive)
	if err != nil {
		t.Fatal(err)
	}
	both := m
	both.OutputsBlob, both.OutputsSize = archiveHash, int64(len(archive))
	const otherKey = "d4735e3a265e16eee03f59718b9b5d03019c07d8b6c51f90da3a666eec13ab35"
	for _, tc := range []struct {
		key      string
		lacking  bool
		archived bool
	}{{testKey, false, false}, {otherKey, true, true}} {
		entry := both
		if tc.lacking {
			lost := []byte("a file nobody uploaded\n")
			entry.Outputs = []store.OutputFile{{Path: "dist/lost.txt", Size: int64(len(lost)), Mode: 0o644, Hash: digestHex(lost)}}
		}
		if err := c.Store(ctx, tc.key, entry, local); err != nil {
			t.Fatal(err)
		}
		fresh := store.NewCAS(t.TempDir())
		got, ok, err := c.Fetch(ctx, tc.key, fresh)
		if err != nil || !ok || got.FilesInCAS == tc.archived || fresh.Has(archiveHash) != tc.archived {
			t.Fatalf("key %s: %+v %v %v, archive fetched %v", tc.key[:8], got, ok, err, fresh.Has(archiveHash))
		}
	}
}

// digestHex is the SHA-256 of data in hex.
func digestHex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
