package remote_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"

	"github.com/vzn/vx/engine/executor/remoteexec"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/remote"
	"github.com/vzn/vx/engine/store"
)

// startBazelRemoteGRPC starts bazel-remote with its gRPC port open (and its HTTP port, which the
// start waits on); URL is the grpc:// URL. extra are more of its flags.
func startBazelRemoteGRPC(t testing.TB, extra ...string) *server {
	t.Helper()
	bin := bazelRemoteBinary(t)
	dir := t.TempDir()
	httpPort, grpcPort := freePort(t), freePort(t)
	args := append([]string{"--dir", filepath.Join(dir, "data"), "--max_size", "1",
		"--http_address", fmt.Sprintf("127.0.0.1:%d", httpPort), "--grpc_address", fmt.Sprintf("127.0.0.1:%d", grpcPort)}, extra...)
	status := fmt.Sprintf("http://127.0.0.1:%d/status", httpPort)
	s := startServer(t, exec.Command(bin, args...), fmt.Sprintf("grpc://127.0.0.1:%d", grpcPort), func() bool { return answers(status) })
	s.Dir = filepath.Join(dir, "data")
	return s
}

// reapiClient is the client vx makes of cfg.
func reapiClient(t *testing.T, cfg *graph.RemoteCache, env map[string]string) remote.Cache {
	t.Helper()
	s, err := remote.Resolve(cfg, func(k string) string { return env[k] }, "")
	if err != nil {
		t.Fatal(err)
	}
	if s.Protocol != remote.ProtocolREAPI {
		t.Fatalf("protocol %q, want reapi", s.Protocol)
	}
	c := remote.New(s)
	t.Cleanup(c.Close)
	return c
}

// testEntry puts an entry's blobs into a new local store: an outputs archive of outputsSize random
// bytes and a log.
func testEntry(t *testing.T, outputsSize int) (remote.Meta, *store.CAS) {
	t.Helper()
	cas := store.NewCAS(t.TempDir())
	outputs := make([]byte, outputsSize)
	_, _ = rand.Read(outputs)
	outHash, err := cas.Put(outputs)
	if err != nil {
		t.Fatal(err)
	}
	log := []byte("built lib\n")
	logHash, _ := cas.Put(log)
	return remote.Meta{Version: remote.MetaVersion, TaskID: "lib#build",
		Outputs:     []store.OutputFile{{Path: "dist/out.bin", Size: int64(outputsSize), Mode: 0o644, Hash: outHash}},
		OutputsBlob: outHash, OutputsSize: int64(outputsSize), LogBlob: logHash, LogSize: int64(len(log)), DurationMs: 12}, cas
}

// sameBlobs fails unless every blob of m is in both stores with the same bytes.
func sameBlobs(t *testing.T, m remote.Meta, a, b *store.CAS) {
	t.Helper()
	for _, h := range []string{m.OutputsBlob, m.LogBlob} {
		x, err := a.Get(h)
		if err != nil {
			t.Fatal(err)
		}
		y, err := b.Get(h)
		if err != nil {
			t.Fatalf("blob %s not fetched: %v", h[:12], err)
		}
		if !bytes.Equal(x, y) {
			t.Fatalf("blob %s differs", h[:12])
		}
	}
}

const testKey = "6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b"

// TestREAPIRoundTrip stores entries in a real bazel-remote over gRPC and reads them back into
// another local store: a small one in batches and back inline in the ActionResult, a large one
// (past the batch bound) through ByteStream both ways, its log inline.
func TestREAPIRoundTrip(t *testing.T) {
	srv := startBazelRemoteGRPC(t)
	c := reapiClient(t, &graph.RemoteCache{URL: srv.URL, Instance: "main"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Check(ctx); err != nil {
		t.Fatalf("check: %v", err)
	}
	if _, ok, err := c.Fetch(ctx, testKey, store.NewCAS(t.TempDir())); ok || err != nil {
		t.Fatalf("an empty server: want a miss, got ok=%v err=%v", ok, err)
	}
	for _, tc := range []struct {
		name       string
		size       int
		bytestream bool
	}{{"small", 3000, false}, {"large", 5 << 20, true}} {
		t.Run(tc.name, func(t *testing.T) {
			m, local := testEntry(t, tc.size)
			key := remote.ScopedKey("round-trip-"+tc.name, testKey)
			if err := c.Store(ctx, key, m, local); err != nil {
				t.Fatalf("store: %v", err)
			}
			other := store.NewCAS(t.TempDir())
			got, ok, err := c.Fetch(ctx, key, other)
			if err != nil || !ok {
				t.Fatalf("fetch: ok=%v err=%v\n%s", ok, err, srv.log.String())
			}
			if got.OutputsBlob != m.OutputsBlob || got.LogBlob != m.LogBlob || len(got.Outputs) != 1 || got.DurationMs != 12 {
				t.Fatalf("fetched %+v, stored %+v", got, m)
			}
			sameBlobs(t, m, local, other)
			logged := srv.log.String()
			wrote := strings.Contains(logged, "GRPC BYTESTREAM WRITE COMPLETED: main/uploads/") && strings.Contains(logged, "/blobs/"+m.OutputsBlob+"/")
			read := strings.Contains(logged, "GRPC BYTESTREAM READ COMPLETED main/blobs/"+m.OutputsBlob)
			if wrote != tc.bytestream || read != tc.bytestream {
				t.Fatalf("ByteStream write %v, read %v; want %v\n%s", wrote, read, tc.bytestream, logged)
			}
			// The server inlines what it can of what the reader asks for: the log always here,
			// and an archive within its inline bound; neither is then read from its CAS.
			if strings.Contains(logged, "GRPC CAS GET "+m.LogBlob) {
				t.Fatalf("the log was read from the CAS, not inlined\n%s", logged)
			}
			if inlined := !read && !strings.Contains(logged, "GRPC CAS GET "+m.OutputsBlob); inlined == tc.bytestream {
				t.Fatalf("the archive inlined: %v, want %v\n%s", inlined, !tc.bytestream, logged)
			}
		})
	}
}

// TestREAPITwoCheckouts is the cross-checkout scenario over bazel-remote's gRPC port: A runs and
// uploads, B gets every task as a remote hit with A's outputs byte for byte, then hits locally.
func TestREAPITwoCheckouts(t *testing.T) {
	srv := startBazelRemoteGRPC(t)
	twoCheckouts(t, `remoteCache: { reapi: '`+srv.URL+`', instance: 'vx', headers: { 'x-team': 'web' } },`, nil, srv)
}

// TestREAPIUnreachable: a server that does not answer costs one warning, and every task runs.
func TestREAPIUnreachable(t *testing.T) {
	cfg := `remoteCache: { reapi: 'grpc://127.0.0.1:` + fmt.Sprint(freePort(t)) + `', timeout: '500ms' },`
	r := vxRun(t, checkout(t, cfg, ""), nil, "build", "test")
	mustPass(t, "down", r)
	if got := sources(r); got["run"] != 6 {
		t.Fatalf("want every task run, got %v\n%s", got, r.stderr)
	}
	if w := warnings(r); len(w) != 1 || !strings.Contains(w[0], "continuing on the local cache") {
		t.Fatalf("want one warning, got %q", w)
	}
}

// TestREAPIWrongDigest: blobs bazel-remote serves with other bytes than their digest (its
// storage damaged) are refused: one warning, every task runs, the outputs are the task's own.
func TestREAPIWrongDigest(t *testing.T) {
	srv := startBazelRemoteGRPC(t, "--storage_mode", "uncompressed")
	cfg := `remoteCache: { reapi: '` + srv.URL + `', mode: 'read' },`
	fill := `remoteCache: { reapi: '` + srv.URL + `' },`
	a := checkout(t, fill, "")
	mustPass(t, "A", vxRun(t, a, nil, "build", "test"))
	damaged := 0
	_ = filepath.Walk(srv.Dir, func(p string, fi os.FileInfo, err error) error {
		rel, _ := filepath.Rel(srv.Dir, p)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 || !strings.HasPrefix(rel, "cas") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		data[len(data)-1] ^= 0xff
		damaged++
		return os.WriteFile(p, data, 0o644)
	})
	if damaged == 0 {
		out, _ := exec.Command("find", srv.Dir).CombinedOutput()
		t.Fatalf("no blob found under %s:\n%s", srv.Dir, out)
	}
	b := checkout(t, cfg, "")
	r := vxRun(t, b, nil, "build", "test")
	mustPass(t, "B", r)
	if got := sources(r); got["run"] == 0 {
		t.Fatalf("want the damaged entries run, got %v\n%s", got, r.stderr)
	}
	if w := warnings(r); len(w) != 1 || !strings.Contains(w[0], "does not match its digest") {
		t.Fatalf("want one digest warning, got %q", w)
	}
	sameOutputs(t, a, b)
}

// TestREAPIResolve: a grpc URL makes the protocol reapi, and what cannot work is refused by name.
func TestREAPIResolve(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	s, err := remote.Resolve(nil, env(map[string]string{remote.EnvURL: "grpcs://cache.example:8980"}), "")
	if err != nil || s.Protocol != remote.ProtocolREAPI {
		t.Fatalf("VX_REMOTE_CACHE_URL=grpcs://…: %+v %v", s, err)
	}
	s, err = remote.Resolve(&graph.RemoteCache{URL: "grpc://h:1", Protocol: "reapi",
		Headers: []graph.RemoteHeader{{Name: "x-key", Env: "KEY"}, {Name: "x-team", Value: "web"}}},
		env(map[string]string{"KEY": "k3y-secret"}), "")
	if err != nil || len(s.Secrets()) != 1 || s.Secrets()[0] != "k3y-secret" {
		t.Fatalf("a header from the environment is a secret: %v %v", s.Secrets(), err)
	}
	for _, tc := range []struct {
		cfg  graph.RemoteCache
		want string
	}{
		{graph.RemoteCache{URL: "grpc://h:1/path", Protocol: "reapi"}, "has a path"},
		{graph.RemoteCache{URL: "http://h:1", Protocol: "reapi"}, "not a grpc:// or grpcs:// URL"},
		{graph.RemoteCache{URL: "grpc://h:1", TLS: &graph.RemoteTLS{CA: "ca.pem"}}, "use grpcs://"},
	} {
		if _, err := remote.Resolve(&tc.cfg, env(nil), ""); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: want %q, got %v", tc.cfg, tc.want, err)
		}
	}
}

// TestREAPIActionKey pins the Action Cache digest of a vx key: entries written by one vx are
// found by the next only while it does not move.
func TestREAPIActionKey(t *testing.T) {
	hash, size := remote.ActionKey(testKey)
	if hash != wantActionKey || size != wantActionKeySize {
		t.Fatalf("ActionKey(%s) = %s/%d, want %s/%d", testKey, hash, size, wantActionKey, wantActionKeySize)
	}
	if other, _ := remote.ActionKey(strings.Repeat("0", 64)); other == hash {
		t.Fatal("two keys share an Action digest")
	}
}

// The Action Cache digest of testKey.
const (
	wantActionKey     = "512eebc2524d51eaedd6845d36701e13bc1b765d115416947a0ba85067c94c75"
	wantActionKeySize = 138
)

// writeCert writes a PEM certificate and key for the names, signed by ca (self-signed when nil),
// and answers the certificate and key.
func writeCert(t *testing.T, dir, name string, ca *tls.Certificate, isCA bool) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: isCA, BasicConstraintsValid: true}
	parent, signer := tmpl, any(key)
	if ca != nil {
		parent, signer = ca.Leaf, ca.PrivateKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	if err := os.WriteFile(filepath.Join(dir, name+".pem"), certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".key"), keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	cert.Leaf, _ = x509.ParseCertificate(der)
	return cert
}

// TestREAPIMutualTLS: bazel-remote over grpcs:// requiring client certificates of a test CA. A
// client with the CA and its certificate round-trips an entry (paths relative to the root); one
// without a certificate, or trusting only the system's roots, is refused as unavailable.
func TestREAPIMutualTLS(t *testing.T) {
	dir := t.TempDir()
	ca := writeCert(t, dir, "ca", nil, true)
	writeCert(t, dir, "server", &ca, false)
	writeCert(t, dir, "client", &ca, false)
	srv := startBazelRemoteGRPC(t, "--tls_ca_file", filepath.Join(dir, "ca.pem"),
		"--tls_cert_file", filepath.Join(dir, "server.pem"), "--tls_key_file", filepath.Join(dir, "server.key"))
	url := strings.Replace(srv.URL, "grpc://", "grpcs://", 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := func(t *testing.T, tlsCfg *graph.RemoteTLS) remote.Cache {
		s, err := remote.Resolve(&graph.RemoteCache{URL: url, TLS: tlsCfg}, func(string) string { return "" }, "")
		if err != nil {
			t.Fatal(err)
		}
		s.Root = dir
		c := remote.New(s)
		t.Cleanup(c.Close)
		return c
	}
	t.Run("with a client certificate", func(t *testing.T) {
		c := client(t, &graph.RemoteTLS{CA: "ca.pem", Cert: "client.pem", Key: "client.key"})
		m, local := testEntry(t, 4000)
		if err := c.Store(ctx, testKey, m, local); err != nil {
			t.Fatalf("store: %v", err)
		}
		other := store.NewCAS(t.TempDir())
		if _, ok, err := c.Fetch(ctx, testKey, other); !ok || err != nil {
			t.Fatalf("fetch: ok=%v err=%v", ok, err)
		}
		sameBlobs(t, m, local, other)
	})
	for name, tlsCfg := range map[string]*graph.RemoteTLS{
		"without a client certificate": {CA: "ca.pem"},
		"with the system's roots":      {Cert: "client.pem", Key: "client.key"},
	} {
		t.Run(name, func(t *testing.T) {
			if err := client(t, tlsCfg).Check(ctx); !errors.Is(err, remote.ErrUnavailable) {
				t.Fatalf("want unavailable, got %v", err)
			}
		})
	}
}

// TestREAPIUploadForExecution puts an Action, its Command and its input root into bazel-remote's
// CAS the way remote execution does: the tree's folders and the messages from memory, the file
// contents from the workspace files (a large one through ByteStream); afterwards the server lacks
// none of them. A file changed since it was hashed is refused before it is sent.
func TestREAPIUploadForExecution(t *testing.T) {
	srv := startBazelRemoteGRPC(t)
	s, err := remote.Resolve(&graph.RemoteCache{URL: srv.URL}, func(string) string { return "" }, "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := remote.DialREAPI(s)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	root := t.TempDir()
	big := make([]byte, 3<<20)
	_, _ = rand.Read(big)
	for name, data := range map[string][]byte{"src/a.txt": []byte("hello\n"), "src/big.bin": big} {
		if err := os.MkdirAll(filepath.Join(root, "src"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inputs, sources, err := remoteexec.InputsFromDisk(root, []string{"src/a.txt", "src/big.bin"})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := remoteexec.BuildTree(inputs)
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := remoteexec.Command(remoteexec.Spec{Shell: "cat src/*", Env: map[string]string{"PATH": "/bin", "HOME": "/tmp"}})
	if err != nil {
		t.Fatal(err)
	}
	action := remoteexec.NewAction(cmd, tree.Root, 0)
	blobs := []remote.Blob{{Hash: action.Digest.Hash, Size: action.Digest.Size, Data: action.Action},
		{Hash: action.CommandDigest.Hash, Size: action.CommandDigest.Size, Data: action.Command}}
	for d, data := range tree.Directories {
		blobs = append(blobs, remote.Blob{Hash: d.Hash, Size: d.Size, Data: data})
	}
	for _, src := range sources {
		blobs = append(blobs, remote.Blob{Hash: src.Digest.Hash, Size: src.Digest.Size, Path: src.Path})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.Upload(ctx, blobs); err != nil {
		t.Fatalf("upload: %v", err)
	}
	req := &pb.FindMissingBlobsRequest{}
	for _, b := range blobs {
		req.BlobDigests = append(req.BlobDigests, &pb.Digest{Hash: b.Hash, SizeBytes: b.Size})
	}
	missing, err := pb.NewContentAddressableStorageClient(r.Conn()).FindMissingBlobs(ctx, req)
	if err != nil || len(missing.GetMissingBlobDigests()) != 0 {
		t.Fatalf("after the upload the server lacks %v (%v)", missing.GetMissingBlobDigests(), err)
	}
	if log := srv.log.String(); !strings.Contains(log, "GRPC BYTESTREAM WRITE COMPLETED") {
		t.Fatalf("the large file was not streamed:\n%s", log)
	}
	if err := os.WriteFile(filepath.Join(root, "src/a.txt"), []byte("HELLO\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// sources[0] is src/a.txt, as InputsFromDisk keeps the order of its paths.
	changed := []remote.Blob{{Hash: sources[0].Digest.Hash, Size: sources[0].Digest.Size, Path: sources[0].Path}}
	fresh := startBazelRemoteGRPC(t)
	s.URL = fresh.URL
	r2, err := remote.DialREAPI(s)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if err := r2.Upload(ctx, changed); err == nil || !strings.Contains(err.Error(), "changed since it was hashed") {
		t.Fatalf("a file changed since it was hashed: want it refused, got %v", err)
	}
}
