package remote_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	pb "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"
	"google.golang.org/protobuf/proto"

	"github.com/vzn/vx/engine/remote"
	"github.com/vzn/vx/engine/store"
)

// countingProxy stands between vx and a real bazel-remote and records each request as
// "METHOD /kind/", and the path of each /ac/ request.
type countingProxy struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string
	acPaths  []string
}

func newCountingProxy(t *testing.T, target string) *countingProxy {
	u, _ := url.Parse(target)
	rp := httputil.NewSingleHostReverseProxy(u)
	p := &countingProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind := "/cas/"
		if strings.Contains(r.URL.Path, "/ac/") {
			kind = "/ac/"
		}
		p.mu.Lock()
		p.requests = append(p.requests, r.Method+" "+kind)
		if kind == "/ac/" {
			p.acPaths = append(p.acPaths, r.URL.Path)
		}
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// take answers the requests recorded since the last take.
func (p *countingProxy) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.requests
	p.requests = nil
	return r
}

func bazelClient(t *testing.T, u string) remote.Cache {
	t.Helper()
	s, err := remote.Resolve(nil, func(k string) string {
		if k == remote.EnvURL {
			return u
		}
		return ""
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	c := remote.New(s)
	t.Cleanup(c.Close)
	return c
}

// entryOf makes an entry of one output file of the given size (random bytes, so that its archive
// is about as large) and a log, its blobs in a new local blob store.
func entryOf(t *testing.T, taskID string, size int, log string) (remote.Meta, *store.CAS) {
	t.Helper()
	content := make([]byte, size)
	_, _ = rand.Read(content)
	e := forgeEntry(t, "dist/out.bin", string(content))
	cas := store.NewCAS(t.TempDir())
	outputsBlob, err := cas.Put(e.archive)
	if err != nil {
		t.Fatal(err)
	}
	logBlob, err := cas.Put([]byte(log))
	if err != nil {
		t.Fatal(err)
	}
	return remote.Meta{Version: remote.MetaVersion, TaskID: taskID, Outputs: e.files, OutputsBlob: outputsBlob,
		OutputsSize: int64(len(e.archive)), LogBlob: logBlob, LogSize: int64(len(log))}, cas
}

func digestKey(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func fetchInto(t *testing.T, c remote.Cache, key string) (remote.Meta, bool, *store.CAS, error) {
	t.Helper()
	cas := store.NewCAS(t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, ok, err := c.Fetch(ctx, key, cas)
	return m, ok, cas, err
}

func storeEntry(t *testing.T, c remote.Cache, key string, m remote.Meta, cas *store.CAS) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Store(ctx, key, m, cas); err != nil {
		t.Fatalf("store: %v", err)
	}
}

// hasBlobs fails unless cas holds each named blob, whole.
func hasBlobs(t *testing.T, cas *store.CAS, hashes ...string) {
	t.Helper()
	for _, h := range hashes {
		if _, err := cas.Get(h); err != nil {
			t.Fatalf("blob %s not fetched: %v", h[:12], err)
		}
	}
}

// bazelBehindProxy starts a bazel-remote, a counting proxy in front of it, and a client of the
// proxy.
func bazelBehindProxy(t *testing.T) (*server, *countingProxy, remote.Cache) {
	srv := startBazelRemote(t, "", "")
	proxy := newCountingProxy(t, srv.URL)
	return srv, proxy, bazelClient(t, proxy.URL)
}

// TestBazelSmallEntryIsOneRequest: an entry whose document, log and archive fit in the
// ActionResult is one PUT to store and one GET to fetch; a larger archive goes to the CAS alone.
func TestBazelSmallEntryIsOneRequest(t *testing.T) {
	_, proxy, c := bazelBehindProxy(t)
	for _, tc := range []struct {
		name               string
		size               int
		wantStore, wantGet string
	}{
		{"small", 2 << 10, "PUT /ac/", "GET /ac/"},
		{"large", 200 << 10, "HEAD /cas/, PUT /cas/, PUT /ac/", "GET /ac/, GET /cas/"},
	} {
		e, cas := entryOf(t, tc.name+"#build", tc.size, "built "+tc.name+"\n")
		key := digestKey(tc.name)
		storeEntry(t, c, key, e, cas)
		if got := strings.Join(proxy.take(), ", "); got != tc.wantStore {
			t.Fatalf("%s: storing made %s, want %s", tc.name, got, tc.wantStore)
		}
		m, ok, fetched, err := fetchInto(t, c, key)
		if err != nil || !ok {
			t.Fatalf("%s: fetch: ok %v, %v", tc.name, ok, err)
		}
		if got := strings.Join(proxy.take(), ", "); got != tc.wantGet {
			t.Fatalf("%s: fetching made %s, want %s", tc.name, got, tc.wantGet)
		}
		if m.OutputsBlob != e.OutputsBlob || m.LogBlob != e.LogBlob || m.TaskID != e.TaskID {
			t.Fatalf("%s: fetched %+v, want %+v", tc.name, m, e)
		}
		hasBlobs(t, fetched, m.OutputsBlob, m.LogBlob)
	}
}

// TestBazelInlineContentsChecked: an ActionResult a server (or anyone who can write to it) altered
// is refused as corrupt, whichever inline part was altered, and leaves no blob behind; one in
// the earlier layout, every part a blob, is still read.
func TestBazelInlineContentsChecked(t *testing.T) {
	srv, proxy, c := bazelBehindProxy(t)
	m, cas := entryOf(t, "a#build", 1<<10, "built a\n")
	key := digestKey("checked")
	storeEntry(t, c, key, m, cas)
	acPath := proxy.acPaths[len(proxy.acPaths)-1]
	stored := getAC(t, srv.URL+acPath)

	outputsAt := -1
	for i, f := range stored.OutputFiles {
		if f.Path == "outputs.tar.zst" {
			outputsAt = i
		}
	}
	if outputsAt < 0 || len(stored.OutputFiles[outputsAt].Contents) == 0 || len(stored.StdoutRaw) == 0 {
		t.Fatalf("the small entry is not inline: %v", stored)
	}
	for _, tc := range []struct {
		name  string
		alter func(ar *pb.ActionResult)
	}{
		{"archive bytes", func(ar *pb.ActionResult) { ar.OutputFiles[outputsAt].Contents[10] ^= 0xff }},
		{"archive and its digest", func(ar *pb.ActionResult) {
			f := ar.OutputFiles[outputsAt]
			f.Contents[10] ^= 0xff
			sum := sha256.Sum256(f.Contents)
			f.Digest.Hash = hex.EncodeToString(sum[:])
		}},
		{"log", func(ar *pb.ActionResult) { ar.StdoutRaw = []byte("not what ran\n") }},
		{"a log digest beside it that disagrees", func(ar *pb.ActionResult) {
			other := []byte("built b\n")
			putBlob(t, srv.URL, other) // the server serves no ActionResult naming a blob it lacks
			sum := sha256.Sum256(other)
			ar.StdoutDigest = &pb.Digest{Hash: hex.EncodeToString(sum[:]), SizeBytes: int64(len(other))}
		}},
		{"document", func(ar *pb.ActionResult) {
			for _, f := range ar.OutputFiles {
				if f.Path == "vx-entry.json" {
					f.Contents = bytes.Replace(f.Contents, []byte("a#build"), []byte("z#build"), 1)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ar := proto.Clone(stored).(*pb.ActionResult)
			tc.alter(ar)
			putAC(t, srv.URL+acPath, ar)
			_, ok, got, err := fetchInto(t, c, key)
			if ok || !errors.Is(err, remote.ErrCorrupt) {
				t.Fatalf("an altered entry: ok %v, err %v; want corrupt", ok, err)
			}
			for _, h := range []string{m.OutputsBlob, m.LogBlob} {
				if got.Has(h) {
					t.Fatalf("blob %s kept from an entry refused", h[:12])
				}
			}
		})
	}

	t.Run("every part a blob", func(t *testing.T) {
		ar := proto.Clone(stored).(*pb.ActionResult)
		for _, f := range ar.OutputFiles {
			putBlob(t, srv.URL, f.Contents)
			f.Contents = nil
		}
		putBlob(t, srv.URL, ar.StdoutRaw)
		sum := sha256.Sum256(ar.StdoutRaw)
		ar.StdoutDigest = &pb.Digest{Hash: hex.EncodeToString(sum[:]), SizeBytes: int64(len(ar.StdoutRaw))}
		ar.StdoutRaw = nil
		putAC(t, srv.URL+acPath, ar)
		proxy.take()
		got, ok, fetched, err := fetchInto(t, c, key)
		if err != nil || !ok {
			t.Fatalf("an entry of blobs: ok %v, %v", ok, err)
		}
		if reqs := proxy.take(); len(reqs) != 4 {
			t.Fatalf("an entry of blobs fetched with %q, want the ActionResult and three blobs", reqs)
		}
		hasBlobs(t, fetched, got.OutputsBlob, got.LogBlob)
	})
}

func getAC(t *testing.T, u string) *pb.ActionResult {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
	}
	ar := &pb.ActionResult{}
	if err := proto.Unmarshal(data, ar); err != nil {
		t.Fatal(err)
	}
	return ar
}

func putAC(t *testing.T, u string, ar *pb.ActionResult) {
	t.Helper()
	data, err := proto.Marshal(ar)
	if err != nil {
		t.Fatal(err)
	}
	put(t, u, data)
}

func putBlob(t *testing.T, base string, data []byte) {
	t.Helper()
	sum := sha256.Sum256(data)
	put(t, base+"/cas/"+hex.EncodeToString(sum[:]), data)
}

func put(t *testing.T, u string, data []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, u, bytes.NewReader(data))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("PUT %s: %d", u, resp.StatusCode)
	}
}
