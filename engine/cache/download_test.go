package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/executor"
	"github.com/vzn/vx/engine/remote"
	"github.com/vzn/vx/engine/store"
)

// servedBlobs is a REAPI CAS in-process: it serves each blob asked for from content by hash,
// through the local store's checked write as the REAPI client does; asked counts the blobs.
type servedBlobs struct {
	content map[string]string
	asked   int
}

func (s *servedBlobs) Download(ctx context.Context, cas *store.CAS, blobs []remote.Blob) error {
	for _, b := range blobs {
		s.asked++
		data, ok := s.content[b.Hash]
		if !ok {
			return remote.ErrBlobMissing
		}
		if err := cas.PutStream(b.Hash, b.Size, strings.NewReader(data)); err != nil {
			return err
		}
	}
	return nil
}

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// An entry whose outputs stayed remote keeps its listing and log, no archive: a run that does
// not want its outputs hits it and writes nothing; one that wants them and cannot fetch them, or
// is served a blob that is not the listed one, misses with nothing written and the entry as it
// was; one that fetches them restores them checked, and the entry is whole from then on. A prune
// of such an entry removes it without looking for its blobs.
func TestRemoteOnlyEntryFetchedLazily(t *testing.T) {
	f := newCacheFixture(t)
	ctx := context.Background()
	const out = "built remotely\n"
	outputs := []executor.RemoteOutput{
		{Path: "packages/p/dist/o.txt", Hash: hashOf(out), Size: int64(len(out))},
		{Path: "packages/p/dist/alias", Link: "o.txt"},
	}
	none := func(string) bool { return false }
	c := f.open(RemoteConfig{})
	c.SetDownloads(Downloads{Wants: none})
	if !c.KeepsRemote(f.task.ID) {
		t.Fatal("a run that wants no outputs does not keep them remote")
	}
	key := strings.Repeat("ab", 32)
	if _, err := c.PutRemoteKept(ctx, f.task, key, []byte("log\n"), 0, outputs); err != nil {
		t.Fatal(err)
	}
	e, ok, err := f.st.Entry(ctx, key)
	if err != nil || !ok || !e.OutputsRemote() || len(e.Outputs) != 2 || f.st.CAS().Has(hashOf(out)) {
		t.Fatalf("kept entry %+v %v %v", e, ok, err)
	}
	dist := filepath.Join(f.p.AbsDir, "dist")
	nothingWritten := func(when string) {
		t.Helper()
		if _, err := os.Lstat(dist); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: outputs were written: %v", when, err)
		}
	}
	nothingWritten("kept")

	hit, ok, err := c.Get(ctx, f.task, key)
	if !ok || err != nil || !hit.OutputsRemote || hit.Files != 0 || string(hit.Log) != "log\n" {
		t.Fatalf("a hit wanting no outputs: %+v %v %v", hit, ok, err)
	}
	nothingWritten("hit wanting no outputs")

	all := func(string) bool { return true }
	c.SetDownloads(Downloads{Wants: all})
	if _, ok, _ := c.Get(ctx, f.task, key); ok {
		t.Fatal("an entry whose outputs cannot be fetched hit")
	}
	nothingWritten("no fetcher")

	wrong := &servedBlobs{content: map[string]string{hashOf(out): "built by someone else\n"}}
	c.SetDownloads(Downloads{Wants: all, Fetcher: wrong})
	if _, ok, _ := c.Get(ctx, f.task, key); ok || wrong.asked != 1 {
		t.Fatalf("a blob served under another digest hit (asked %d)", wrong.asked)
	}
	nothingWritten("wrong blob")
	if f.st.CAS().Has(hashOf(out)) {
		t.Fatal("the wrong blob was stored")
	}
	if e, _, _ := f.st.Entry(ctx, key); !e.OutputsRemote() {
		t.Fatalf("the refused fetch changed the entry: %+v", e)
	}

	right := &servedBlobs{content: map[string]string{hashOf(out): out}}
	c.SetDownloads(Downloads{Wants: all, Fetcher: right})
	hit, ok, err = c.Get(ctx, f.task, key)
	if !ok || err != nil || hit.OutputsRemote || hit.Files != 2 {
		t.Fatalf("a fetched hit: %+v %v %v", hit, ok, err)
	}
	if data, err := os.ReadFile(filepath.Join(dist, "o.txt")); err != nil || string(data) != out {
		t.Fatalf("restored output %q %v", data, err)
	}
	if target, err := os.Readlink(filepath.Join(dist, "alias")); err != nil || target != "o.txt" {
		t.Fatalf("restored link %q %v", target, err)
	}
	whole, _, _ := f.st.Entry(ctx, key)
	if whole.OutputsRemote() || !f.st.CAS().Has(whole.OutputsBlob) {
		t.Fatalf("the fetched entry is not whole: %+v", whole)
	}

	// A prune of an entry whose outputs stayed remote removes the entry and its log, and asks
	// for no outputs blob.
	if _, err := c.PutRemoteKept(ctx, f.task, strings.Repeat("cd", 32), []byte("other log\n"), 0, outputs[:1]); err != nil {
		t.Fatal(err)
	}
	kept, _, _ := f.st.Entry(ctx, strings.Repeat("cd", 32))
	if err := Evict(ctx, f.st, []store.Entry{kept}, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := f.st.Entry(ctx, kept.Hash); ok || f.st.CAS().Has(kept.LogBlob) {
		t.Fatal("the pruned entry or its log is still there")
	}
	if _, ok, _ := c.Get(ctx, f.task, key); !ok {
		t.Fatal("the whole entry no longer hits after the prune of the other")
	}
}
