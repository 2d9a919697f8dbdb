package cache

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/remote"
)

// signatureKey is the Turborepo signature key of the tests' signed artifacts.
const signatureKey = "sign-me"

// artifact is a Turborepo artifact of a vx entry for key: its blobs, of the listed outputs, and its
// signature tag.
func (f *cacheFixture) artifact(key string, entries ...archived) (body []byte, tag string) {
	f.t.Helper()
	files, archive := craft(entries...)
	log := []byte("log\n")
	sum := func(b []byte) string {
		s := sha256.Sum256(b)
		return hex.EncodeToString(s[:])
	}
	m := remote.Meta{Version: remote.MetaVersion, TaskID: f.task.ID, Outputs: files, OutputsBlob: sum(archive),
		OutputsSize: int64(len(archive)), LogBlob: sum(log), LogSize: int64(len(log))}
	doc, err := json.Marshal(m)
	if err != nil {
		f.t.Fatal(err)
	}
	body = append([]byte("vx-remote-entry 1\n"), doc...)
	body = append(body, '\n')
	body = append(append(body, archive...), log...)
	mac := hmac.New(sha256.New, []byte(signatureKey))
	mac.Write([]byte(key))
	mac.Write([]byte("team"))
	mac.Write(body)
	return body, base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// turboRemote is the remote cache of a Turborepo server at u, with the given timeout, signed or
// not, read-only.
func (f *cacheFixture) turboRemote(u string, timeout time.Duration, signed bool) RemoteConfig {
	cfg := &graph.RemoteCache{URL: u, Protocol: remote.ProtocolTurbo, Team: "team", Timeout: timeout, Mode: graph.RemoteRead}
	if signed {
		cfg.SignatureKeyEnv = "SIG"
	}
	return ResolveRemote(cfg, func(k string) string {
		if k == "SIG" {
			return signatureKey
		}
		return ""
	}, "", f.warn.add)
}

// trickler serves body for every artifact: the first fast bytes at once, then one byte every
// 300 ms until the client goes away; sent counts the bytes written.
type trickler struct {
	body []byte
	tag  string
	fast int
	sent atomic.Int64
}

func (tr *trickler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if tr.tag != "" {
		w.Header().Set("x-artifact-tag", tr.tag)
	}
	w.WriteHeader(http.StatusOK)
	w.Write(tr.body[:tr.fast])
	tr.sent.Add(int64(tr.fast))
	w.(http.Flusher).Flush()
	for _, b := range tr.body[tr.fast:] {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(300 * time.Millisecond):
		}
		if _, err := w.Write([]byte{b}); err != nil {
			return
		}
		tr.sent.Add(1)
		w.(http.Flusher).Flush()
	}
}

// A server that trickles an artifact (one byte every 300 ms, well within the 1 s stall timeout)
// cannot hold a run: past 2 × timeout + size ÷ 1 MiB/s (or the plain timeout while the size is
// unknown) the fetch is a miss with one warning, the body unread. Signed artifacts come through
// the same watched path.
func TestTricklingServerIsAMiss(t *testing.T) {
	for _, tc := range []struct {
		name   string
		signed bool
		tail   int // the bytes trickled; -1 for the whole body
	}{
		{"tail", false, 40},
		{"whole", false, -1},
		{"signed-tail", true, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newCacheFixture(t)
			body, tag := f.artifact(key(4), archived{name: "dist/o.txt", content: "out\n"})
			tr := &trickler{body: body}
			if tc.signed {
				tr.tag = tag
			}
			if tc.tail >= 0 {
				tr.fast = len(body) - tc.tail
			}
			srv := httptest.NewServer(tr)
			defer srv.Close()
			c := f.open(f.turboRemote(srv.URL, time.Second, tc.signed))
			if _, ok, _ := c.Get(context.Background(), f.task, key(4)); ok {
				t.Fatal("a trickled artifact hit")
			}
			if sent := tr.sent.Load(); sent >= int64(len(body)) {
				t.Fatalf("the whole body (%d bytes) was read", sent)
			}
			rc := c.Close()
			if w := f.warn.all(); len(w) != 1 || !strings.Contains(w[0], "not done within") {
				t.Fatalf("want one warning of the bound, got %q", w)
			}
			if rc == nil || rc.Hits != 0 || rc.Errors != 1 {
				t.Fatalf("remote cache: %+v", rc)
			}
		})
	}
	// The same server, fast, is a hit: the bound is the transfer's, not the server's.
	f := newCacheFixture(t)
	body, tag := f.artifact(key(5), archived{name: "dist/o.txt", content: "out\n"})
	srv := httptest.NewServer(&trickler{body: body, tag: tag, fast: len(body)})
	defer srv.Close()
	c := f.open(f.turboRemote(srv.URL, time.Second, true))
	if _, ok, err := c.Get(context.Background(), f.task, key(5)); !ok {
		t.Fatalf("a fast signed artifact missed: %v %q", err, f.warn.all())
	}
}
