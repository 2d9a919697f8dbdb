package cache

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/remote"
)

// authLog is a loopback server that records the Authorization header of every request.
type authLog struct {
	mu    sync.Mutex
	seen  []string
	serve http.HandlerFunc
}

func (a *authLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.seen = append(a.seen, r.Header.Get("Authorization"))
	a.mu.Unlock()
	a.serve(w, r)
}

func (a *authLog) headers() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.seen...)
}

// A redirect from the cache server to another port of the same host is followed without the
// token, Bearer (Turborepo) or Basic (bazel-remote's htpasswd).
func TestRedirectDropsTheToken(t *testing.T) {
	for _, tc := range []struct{ protocol, token string }{
		{remote.ProtocolTurbo, "turbo-token"},
		{remote.ProtocolBazel, "user:bazel-password"},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			f := newCacheFixture(t)
			other := &authLog{serve: func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }}
			elsewhere := httptest.NewServer(other)
			defer elsewhere.Close()
			origin := &authLog{serve: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, elsewhere.URL+r.URL.RequestURI(), http.StatusFound)
			}}
			srv := httptest.NewServer(origin)
			defer srv.Close()
			cfg := &graph.RemoteCache{URL: srv.URL, Protocol: tc.protocol, Team: "team", Timeout: 5 * time.Second, Mode: graph.RemoteRead}
			rc := ResolveRemote(cfg, func(k string) string {
				if k == remote.EnvToken {
					return tc.token
				}
				return ""
			}, "", f.warn.add)
			c := f.open(rc)
			// A key of hex digits: bazel-remote asks only for a SHA-256.
			if _, ok, _ := c.Get(context.Background(), f.task, key(2)); ok {
				t.Fatal("a hit from nowhere")
			}
			if got := origin.headers(); len(got) == 0 || got[0] == "" {
				t.Fatalf("the cache server itself got no token: %q", got)
			}
			got := other.headers()
			if len(got) == 0 {
				t.Fatal("the redirect was not followed")
			}
			for _, h := range got {
				if h != "" {
					t.Fatalf("the other port got Authorization %q", h)
				}
			}
		})
	}
}

// A redirect from https to http is refused, with one warning: the token and the entry would travel
// in the clear.
func TestRedirectToPlainHTTPIsRefused(t *testing.T) {
	f := newCacheFixture(t)
	plain := &authLog{serve: func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }}
	elsewhere := httptest.NewServer(plain)
	defer elsewhere.Close()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.RequestURI(), http.StatusFound)
	}))
	defer srv.Close()
	// vx trusts the test server's certificate as a system root: the first TLS connection of this
	// test binary reads SSL_CERT_FILE (the test certificate is the same for every httptest server).
	certFile := filepath.Join(t.TempDir(), "cert.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSL_CERT_FILE", certFile)
	cfg := &graph.RemoteCache{URL: srv.URL, Protocol: remote.ProtocolTurbo, Team: "team", Timeout: 5 * time.Second, Mode: graph.RemoteRead}
	rc := ResolveRemote(cfg, func(k string) string {
		if k == remote.EnvToken {
			return "turbo-token"
		}
		return ""
	}, "", f.warn.add)
	c := f.open(rc)
	if _, ok, _ := c.Get(context.Background(), f.task, key(2)); ok {
		t.Fatal("a hit through a redirect to http")
	}
	if got := plain.headers(); len(got) != 0 {
		t.Fatalf("the redirect to http was followed: %q", got)
	}
	if w := f.warn.all(); len(w) != 1 || !strings.Contains(w[0], "redirect from https to http refused") {
		t.Fatalf("want one warning of the refused redirect, got %q", w)
	}
}
