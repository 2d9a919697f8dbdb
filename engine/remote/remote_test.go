package remote_test

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	pb "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"
	"github.com/klauspost/compress/zstd"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/remote"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
	"github.com/vzn/vx/internal/testkit"
)

func TestMain(m *testing.M) {
	cleanup := testkit.IsolateCacheHome()
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) { cleanup(); os.Exit(code) }))
}

// bazelConfig is a remoteCache object for a bazel-remote at u.
func bazelConfig(u, extra string) string {
	return `remoteCache: { url: '` + u + `', protocol: 'bazel', tokenEnv: 'RC_TOKEN'` + extra + ` },`
}

// turboConfig is a remoteCache object for a Turborepo API server at u, signing with SIG_KEY.
func turboConfig(u, extra string) string {
	return `remoteCache: { url: '` + u + `', protocol: 'turbo', slug: 'vx-team', tokenEnv: 'RC_TOKEN', signature: { keyEnv: 'SIG_KEY' }` + extra + ` },`
}

// twoCheckouts is the acceptance scenario: A runs and uploads, B (another folder) gets every task
// as a remote hit with A's outputs byte for byte, then B hits its local cache.
func twoCheckouts(t *testing.T, cfg string, env []string, srv *server) {
	a, b := checkout(t, cfg, ""), checkout(t, cfg, "")
	ra := vxRun(t, a, env, "build", "test")
	mustPass(t, "A", ra)
	if got := sources(ra); got["run"] != 6 {
		t.Fatalf("A: want 6 tasks run, got %v\n%s", got, ra.stderr)
	}
	if rc := ra.sum.RemoteCache; rc == nil || rc.Uploads != 6 || rc.Errors != 0 {
		t.Fatalf("A: want 6 uploads, got %+v\n%s", rc, ra.stderr)
	}
	rb := vxRun(t, b, env, "build", "test")
	mustPass(t, "B", rb)
	if got := sources(rb); got["remote"] != 6 {
		t.Fatalf("B: want 6 remote hits, got %v\n%s", got, rb.stderr)
	}
	if rb.sum.Totals.RemoteHits != 6 || rb.sum.RemoteCache.Hits != 6 {
		t.Fatalf("B: want 6 remote hits counted, got %+v %+v", rb.sum.Totals, rb.sum.RemoteCache)
	}
	if w := warnings(rb); len(w) != 0 {
		t.Fatalf("B: warnings %q", w)
	}
	sameOutputs(t, a, b)
	if !strings.Contains(rb.stderr, "built lib with ***") {
		t.Errorf("B: the remote hit's log was not replayed masked:\n%s", rb.stderr)
	}
	var last struct {
		Totals summary.Totals
		Tasks  []struct{ CacheSource *string }
	}
	vxJSON(t, b, env, &last, "last")
	if last.Totals.RemoteHits != 6 || last.Tasks[0].CacheSource == nil || *last.Tasks[0].CacheSource != "remote" {
		t.Fatalf("vx last: want the remote hits, got %+v", last.Totals)
	}
	var stats history.CacheStats
	vxJSON(t, b, env, &stats, "cache", "stats")
	if stats.RemoteHits24h != 6 {
		t.Fatalf("vx cache stats: want 6 remote hits, got %+v", stats)
	}
	var info struct {
		RemoteCache struct {
			Value remote.Report `json:"value"`
		} `json:"remoteCache"`
	}
	vxJSON(t, b, env, &info, "info")
	if rc := info.RemoteCache.Value; !rc.Configured || rc.LastCheck == nil || !rc.LastCheck.OK {
		t.Fatalf("vx info: want a passing server check, got %+v", rc)
	}
	rb2 := vxRun(t, b, env, "build", "test")
	mustPass(t, "B again", rb2)
	if got := sources(rb2); got["local"] != 6 {
		t.Fatalf("B again: want 6 local hits, got %v", got)
	}
	noSecretIn(t, srv.Dir)
}

func TestBazelRemoteTwoCheckouts(t *testing.T) {
	srv := startBazelRemote(t, "", "")
	twoCheckouts(t, bazelConfig(srv.URL, ""), nil, srv)
}

func TestTurboTwoCheckouts(t *testing.T) {
	srv := startDucktors(t, "turbo-token")
	twoCheckouts(t, turboConfig(srv.URL, ""), []string{"RC_TOKEN=turbo-token", "SIG_KEY=sign-me"}, srv)
}

// TestEnvConfig points a workspace without remoteCache at a server through VX_REMOTE_CACHE_URL.
func TestEnvConfig(t *testing.T) {
	srv := startBazelRemote(t, "", "")
	env := []string{"VX_REMOTE_CACHE_URL=" + srv.URL}
	a, b := checkout(t, "", ""), checkout(t, "", "")
	mustPass(t, "A", vxRun(t, a, env, "build"))
	rb := vxRun(t, b, env, "build")
	mustPass(t, "B", rb)
	if got := sources(rb); got["remote"] != 3 {
		t.Fatalf("B: want 3 remote hits, got %v\n%s", got, rb.stderr)
	}
	off := vxRun(t, checkout(t, "", ""), env, "build", "--remote-cache=off")
	if got := sources(off); got["run"] != 3 || off.sum.RemoteCache != nil {
		t.Fatalf("--remote-cache=off: want 3 run and no remote cache, got %v %+v", got, off.sum.RemoteCache)
	}
	read := vxRun(t, checkout(t, "", ""), append(env, "VX_REMOTE_CACHE_URL=http://127.0.0.1:1"), "build", "--remote-cache=read")
	mustPass(t, "read, server down", read)
	if rc := read.sum.RemoteCache; rc == nil || rc.Uploads != 0 || len(warnings(read)) != 1 {
		t.Fatalf("read mode against a closed port: %+v %q", rc, warnings(read))
	}
}

// faultProxy stands between vx and a real server and injects a fault into what matches.
type faultProxy struct {
	*httptest.Server
	mode atomic.Value // string: "", "stall", "500", "corrupt"
}

func newFaultProxy(t *testing.T, target string) *faultProxy {
	u, _ := url.Parse(target)
	rp := httputil.NewSingleHostReverseProxy(u)
	p := &faultProxy{}
	p.mode.Store("")
	rp.ModifyResponse = func(resp *http.Response) error {
		if p.mode.Load() != "corrupt" || resp.StatusCode != http.StatusOK || resp.Request.Method != http.MethodGet {
			return nil
		}
		isAC := strings.Contains(resp.Request.URL.Path, "/ac/")
		if !isAC && !strings.Contains(resp.Request.URL.Path, "/cas/") && !strings.Contains(resp.Request.URL.Path, "/v8/") {
			return nil
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		switch {
		case isAC:
			// What an ActionResult holds inline is corrupted, as a blob is.
			if data, err = corruptInline(data); err != nil {
				return err
			}
		case len(data) > 0:
			data[len(data)-1] ^= 0xff
		}
		resp.Body = io.NopCloser(bytes.NewReader(data))
		return nil
	}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p.mode.Load() {
		case "stall":
			select {
			case <-time.After(2 * time.Second):
			case <-r.Context().Done():
				return
			}
		case "500":
			http.Error(w, "injected", http.StatusInternalServerError)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// corruptInline flips the last byte of each output file and log an ActionResult holds inline.
func corruptInline(data []byte) ([]byte, error) {
	ar := &pb.ActionResult{}
	if err := proto.Unmarshal(data, ar); err != nil {
		return nil, err
	}
	flip := func(b []byte) {
		if len(b) > 0 {
			b[len(b)-1] ^= 0xff
		}
	}
	for _, f := range ar.OutputFiles {
		flip(f.Contents)
	}
	flip(ar.StdoutRaw)
	return proto.Marshal(ar)
}

// TestFaults: every run passes on local work with one clear warning, and nothing wrong is restored.
func TestFaults(t *testing.T) {
	srv := startBazelRemote(t, "vx", "right-password")
	proxy := newFaultProxy(t, srv.URL)
	cfg := bazelConfig(proxy.URL, ", timeout: '500ms'")
	good := []string{"RC_TOKEN=vx:right-password"}
	a := checkout(t, cfg, "")
	mustPass(t, "fill", vxRun(t, a, good, "build", "test"))

	for _, tc := range []struct {
		name, mode string
		env        []string
	}{
		{"stall", "stall", good},
		{"500", "500", good},
		{"corrupt blob", "corrupt", good},
		{"wrong token", "", []string{"RC_TOKEN=vx:wrong"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proxy.mode.Store(tc.mode)
			defer proxy.mode.Store("")
			b := checkout(t, cfg, "")
			start := time.Now()
			r := vxRun(t, b, tc.env, "build", "test")
			took := time.Since(start)
			mustPass(t, tc.name, r)
			if got := sources(r); got["run"] != 6 {
				t.Fatalf("want every task run locally, got %v\n%s", got, r.stderr)
			}
			if w := warnings(r); len(w) != 1 {
				t.Fatalf("want one warning, got %q", w)
			}
			if r.sum.RemoteCache == nil || r.sum.RemoteCache.Errors == 0 {
				t.Fatalf("the summary does not count the failure: %+v", r.sum.RemoteCache)
			}
			if strings.Contains(r.stderr, "right-password") || strings.Contains(r.stderr, "vx:wrong") {
				t.Fatalf("the token reached stderr:\n%s", r.stderr)
			}
			if took > 8*time.Second {
				t.Fatalf("the run took %s: the fault stalled it", took)
			}
			sameOutputs(t, a, b)
		})
	}

	t.Run("killed mid-run", func(t *testing.T) {
		killFile := filepath.Join(t.TempDir(), "kill")
		own := startBazelRemote(t, "", "")
		c := checkout(t, bazelConfig(own.URL, ", timeout: '500ms'"),
			`if [ "$(basename "$PWD")" = mid ]; then touch `+killFile+`; sleep 1; fi
`)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; i < 200; i++ {
				if _, err := os.Stat(killFile); err == nil {
					own.Stop()
					return
				}
				time.Sleep(25 * time.Millisecond)
			}
		}()
		r := vxRun(t, c, nil, "build", "test")
		<-done
		mustPass(t, "killed mid-run", r)
		if w := warnings(r); len(w) != 1 {
			t.Fatalf("want one warning, got %q\n%s", w, r.stderr)
		}
	})
}

// TestNothingOutsideOutputs: an entry that a server serves with a file outside the task's declared
// outputs is refused whole, and the task runs.
func TestNothingOutsideOutputs(t *testing.T) {
	srv := startBazelRemote(t, "", "")
	cfg := bazelConfig(srv.URL, "")
	a := checkout(t, cfg, "")
	ra := vxRun(t, a, nil, "build")
	mustPass(t, "A", ra)
	var libKey string
	for _, task := range ra.sum.Tasks {
		if task.TaskID == "lib#build" {
			libKey = task.Hash
		}
	}
	// A forged entry for lib#build: its archive and listing name a file beside the workspace.
	forged := forgeEntry(t, "//../escaped.txt", "pwned\n")
	cas := store.NewCAS(t.TempDir())
	outputsBlob, _ := cas.Put(forged.archive)
	logBlob, _ := cas.Put([]byte("forged\n"))
	m := remote.Meta{Version: remote.MetaVersion, TaskID: "lib#build", Outputs: forged.files, OutputsBlob: outputsBlob,
		OutputsSize: int64(len(forged.archive)), LogBlob: logBlob, LogSize: int64(len("forged\n"))}
	settings, err := remote.Resolve(nil, func(k string) string {
		if k == remote.EnvURL {
			return srv.URL
		}
		return ""
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	client := remote.New(settings)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	err = client.Store(ctx, libKey, m, cas)
	cancel()
	client.Close()
	if err != nil {
		t.Fatalf("forged upload: %v", err)
	}
	b := checkout(t, cfg, "")
	rb := vxRun(t, b, nil, "build")
	mustPass(t, "B", rb)
	if _, err := os.Stat(filepath.Join(filepath.Dir(b), "escaped.txt")); err == nil {
		t.Fatal("a served entry wrote outside the workspace")
	}
	for _, task := range rb.sum.Tasks {
		if task.TaskID == "lib#build" && task.Status != store.StatusMiss {
			t.Fatalf("lib#build: want run locally, got %s", task.Status)
		}
	}
	if w := warnings(rb); len(w) != 1 {
		t.Fatalf("want one warning, got %q", w)
	}
	sameOutputs(t, a, b)
}

type forgedEntry struct {
	archive []byte
	files   []store.OutputFile
}

// forgeEntry makes a tar.zst archive holding one file, as a hostile server would.
func forgeEntry(t *testing.T, name, content string) forgedEntry {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	_ = tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg})
	_, _ = tw.Write([]byte(content))
	_ = tw.Close()
	enc, _ := zstd.NewWriter(nil)
	defer enc.Close()
	sum := store.NewCAS(t.TempDir())
	h, _ := sum.Put([]byte(content))
	return forgedEntry{archive: enc.EncodeAll(buf.Bytes(), nil),
		files: []store.OutputFile{{Path: name, Size: int64(len(content)), Mode: 0o644, Hash: h}}}
}

// TestTurboFaults: a bad signature and a turbo user's own artifact under vx's key are misses.
func TestTurboFaults(t *testing.T) {
	srv := startDucktors(t, "turbo-token")
	cfg := turboConfig(srv.URL, "")
	env := []string{"RC_TOKEN=turbo-token", "SIG_KEY=sign-me"}
	a := checkout(t, cfg, "")
	ra := vxRun(t, a, env, "build", "test")
	mustPass(t, "A", ra)

	t.Run("bad signature", func(t *testing.T) {
		b := checkout(t, cfg, "")
		r := vxRun(t, b, []string{"RC_TOKEN=turbo-token", "SIG_KEY=another-key"}, "build", "test", "--remote-cache=read")
		mustPass(t, "B", r)
		if got := sources(r); got["run"] != 6 {
			t.Fatalf("want every task run, got %v", got)
		}
		if w := warnings(r); len(w) != 1 || !strings.Contains(w[0], "signature") {
			t.Fatalf("want one signature warning, got %q", w)
		}
		sameOutputs(t, a, b)
	})
	t.Run("wrong token", func(t *testing.T) {
		r := vxRun(t, checkout(t, cfg, ""), []string{"RC_TOKEN=nope", "SIG_KEY=sign-me"}, "build", "test")
		mustPass(t, "B", r)
		if w := warnings(r); len(w) != 1 || strings.Contains(r.stderr, "nope") {
			t.Fatalf("want one warning without the token, got %q", w)
		}
	})
	t.Run("turbo's own artifacts", func(t *testing.T) {
		// What `turbo run build` stores: a tar.zst under its own (16-hex) hash, and here also one
		// under a vx key, to prove vx reads it as a miss, not as an entry.
		turboBody := forgeEntry(t, "apps/web/.turbo/turbo-build.log", "turbo\n").archive
		for _, task := range ra.sum.Tasks {
			if task.TaskID == "app#test" {
				putTurbo(t, srv.URL, task.Hash, turboBody)
			}
		}
		putTurbo(t, srv.URL, "0123456789abcdef", turboBody)
		unsigned := `remoteCache: { url: '` + srv.URL + `', protocol: 'turbo', slug: 'vx-team', tokenEnv: 'RC_TOKEN' },`
		b := checkout(t, unsigned, "")
		r := vxRun(t, b, []string{"RC_TOKEN=turbo-token"}, "build", "test", "--remote-cache=read")
		mustPass(t, "B", r)
		got := sources(r)
		if got["remote"] != 5 || got["run"] != 1 {
			t.Fatalf("want 5 remote hits and app#test run, got %v\n%s", got, r.stderr)
		}
	})
}

// putTurbo stores an artifact as turbo does, without vx.
func putTurbo(t *testing.T, base, hash string, body []byte) {
	req, _ := http.NewRequest(http.MethodPut, base+"/v8/artifacts/"+hash+"?slug=vx-team", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer turbo-token")
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("x-artifact-tag", "dHVyYm8ncyBvd24gdGFn")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("PUT turbo artifact: %s", resp.Status)
	}
}
