package remote

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	pb "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"
	bspb "google.golang.org/genproto/googleapis/bytestream"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/vzn/vx/engine/store"
)

// reapiCache is a server of the Remote Execution API v2 (bazel-remote's gRPC port, Buildbarn,
// BuildBuddy, NativeLink…), used as a cache only. A task's entry is an ActionResult in the Action
// Cache under the digest of an Action that names vx's key (ActionKey): its output files are the
// entry's Meta document (vx-entry.json) and its outputs archive (outputs.tar.zst), its stdout the
// log, all three blobs in the CAS, as bazel's HTTP layout has them. Blobs travel in batches
// (BatchReadBlobs, BatchUpdateBlobs) under the smaller of the server's advertised batch limit and
// maxBatchBytes, and larger ones through ByteStream; every blob read is checked against its digest
// as it is stored locally, every call is bounded in time (a transfer by its size, and by a stall).
type reapiCache struct {
	target   string // the URL as it may be shown
	instance string
	timeout  time.Duration
	md       metadata.MD
	secrets  []string

	conn *grpc.ClientConn
	// setupErr is why the client could not be made (a TLS file unreadable): every call answers it.
	setupErr error

	ac   pb.ActionCacheClient
	cas  pb.ContentAddressableStorageClient
	caps pb.CapabilitiesClient
	bs   bspb.ByteStreamClient

	limitsOnce sync.Once
	limits     casLimits
	limitsErr  error
}

// casLimits are what the server's capabilities allow a client to send.
type casLimits struct {
	// batchBytes bounds the blobs of one batch call; a larger blob goes through ByteStream.
	batchBytes int64
	// maxBlob is the largest blob the server takes (0: no bound of its own).
	maxBlob int64
	// acUpdate says that the server lets this client write its Action Cache
	// (action_cache_update_capabilities.update_enabled); a deployment that lets only its
	// workers write it says false.
	acUpdate bool
}

// The bounds of a gRPC message, a batch, and a ByteStream chunk. A batch stays well under the
// message bound, which bounds what a server may send in one answer.
const (
	maxMessageBytes = 4 << 20
	maxBatchBytes   = 2 << 20
	chunkBytes      = 1 << 20
)

// newREAPI answers the client of the settings' reapi server. The connection is made at the first
// call, so a server that is down costs that call's timeout, then a miss.
func newREAPI(s Settings) *reapiCache {
	c := &reapiCache{target: RedactURL(s.URL), instance: s.Instance, timeout: s.Timeout, secrets: s.Secrets(),
		md: metadata.MD{}}
	for _, h := range s.Headers {
		if h.Value != "" {
			c.md.Append(h.Name, h.Value)
		}
	}
	if s.Token != "" {
		if strings.Contains(s.Token, ":") {
			c.md.Set("authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(s.Token)))
		} else {
			c.md.Set("authorization", "Bearer "+s.Token)
		}
	}
	conn, err := dialREAPI(s)
	if err != nil {
		c.setupErr = fmt.Errorf("%w: %s: %v", ErrUnavailable, c.target, err)
		return c
	}
	c.conn = conn
	c.ac, c.cas = pb.NewActionCacheClient(conn), pb.NewContentAddressableStorageClient(conn)
	c.caps, c.bs = pb.NewCapabilitiesClient(conn), bspb.NewByteStreamClient(conn)
	return c
}

// dialREAPI makes the gRPC client of s's server: plain text for grpc://, TLS for grpcs:// with
// the configured roots and client certificate; messages bounded both ways.
func dialREAPI(s Settings) (*grpc.ClientConn, error) {
	u, err := url.Parse(s.URL)
	if err != nil {
		return nil, err
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), map[string]string{"grpc": "80", "grpcs": "443"}[u.Scheme])
	}
	creds := insecure.NewCredentials()
	if u.Scheme == "grpcs" {
		cfg, err := tlsConfig(s, u.Hostname())
		if err != nil {
			return nil, err
		}
		creds = credentials.NewTLS(cfg)
	}
	return grpc.NewClient("passthrough:///"+host,
		grpc.WithTransportCredentials(creds),
		grpc.WithUserAgent("vx"),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageBytes), grpc.MaxCallSendMsgSize(maxMessageBytes)))
}

// tlsConfig is the TLS of a grpcs:// server: the CA file's roots (else the system's), the client
// certificate and key (mutual TLS), the server name; TLS 1.2 at least.
func tlsConfig(s Settings, host string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host}
	if s.TLS.ServerName != "" {
		cfg.ServerName = s.TLS.ServerName
	}
	path := func(p string) string {
		if filepath.IsAbs(p) || s.Root == "" {
			return p
		}
		return filepath.Join(s.Root, p)
	}
	if s.TLS.CA != "" {
		pem, err := os.ReadFile(path(s.TLS.CA))
		if err != nil {
			return nil, fmt.Errorf("tls ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls ca %s holds no PEM certificate", s.TLS.CA)
		}
		cfg.RootCAs = pool
	}
	if s.TLS.Cert != "" {
		cert, err := tls.LoadX509KeyPair(path(s.TLS.Cert), path(s.TLS.Key))
		if err != nil {
			return nil, fmt.Errorf("tls cert and key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// ActionKey is the Action Cache digest under which a REAPI server keeps the entry of vx key: the
// digest of an Action whose command is `vx cache <key>` on an empty input root. It is a real
// Action's digest, as every server takes, and no build tool's action has it.
func ActionKey(key string) (hash string, size int64) {
	cmd, _ := proto.MarshalOptions{Deterministic: true}.Marshal(&pb.Command{Arguments: []string{"vx", "cache", key}})
	emptyDir := sha256.Sum256(nil)
	action, _ := proto.MarshalOptions{Deterministic: true}.Marshal(&pb.Action{
		CommandDigest:   digestOf(cmd),
		InputRootDigest: &pb.Digest{Hash: hex.EncodeToString(emptyDir[:])},
	})
	d := digestOf(action)
	return d.Hash, d.SizeBytes
}

// digestOf is the REAPI digest of data.
func digestOf(data []byte) *pb.Digest {
	sum := sha256.Sum256(data)
	return &pb.Digest{Hash: hex.EncodeToString(sum[:]), SizeBytes: int64(len(data))}
}

// call is ctx with the client's headers, bounded by the client's timeout.
func (c *reapiCache) call(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	return metadata.NewOutgoingContext(ctx, c.md), cancel
}

// errNotFound is a server's NotFound: a miss.
var errNotFound = errors.New("not found")

// rpcErr classifies a call's error: NotFound is errNotFound; a refused credential is
// ErrWriteRefused for a write and ErrUnavailable for a read; anything else (down, slow, a dropped
// stream, an internal error) is ErrUnavailable. The text is masked.
func (c *reapiCache) rpcErr(ctx context.Context, op string, err error, write bool) error {
	st := grpcstatus.Convert(err)
	code, msg := st.Code(), st.Message()
	if why := context.Cause(ctx); why != nil && ctx.Err() != nil && !errors.Is(why, context.Canceled) && !errors.Is(why, context.DeadlineExceeded) {
		msg = why.Error() // a watched transfer's own reason: a stall, or its deadline
	}
	msg = c.mask(trimErr(msg))
	switch {
	case code == codes.NotFound:
		return errNotFound
	case write && code == codes.PermissionDenied:
		return fmt.Errorf("%w: %s %s: %s %s", ErrWriteRefused, op, c.target, code, msg)
	case code == codes.Unauthenticated || code == codes.PermissionDenied:
		return fmt.Errorf("%w: %s %s: %s %s (is the token right?)", ErrUnavailable, op, c.target, code, msg)
	}
	return fmt.Errorf("%w: %s %s: %s %s", ErrUnavailable, op, c.target, code, msg)
}

// mask is s with every secret of the settings masked.
func (c *reapiCache) mask(s string) string {
	for _, v := range c.secrets {
		s = strings.ReplaceAll(s, v, "***")
	}
	return s
}

// casLimits asks the server's capabilities once: it must take SHA-256 digests; its batch bound,
// if any, lowers maxBatchBytes.
func (c *reapiCache) casLimits(ctx context.Context) (casLimits, error) {
	c.limitsOnce.Do(func() {
		cctx, cancel := c.call(ctx)
		defer cancel()
		caps, err := c.caps.GetCapabilities(cctx, &pb.GetCapabilitiesRequest{InstanceName: c.instance})
		if err != nil {
			c.limitsErr = c.rpcErr(cctx, "GetCapabilities", err, false)
			return
		}
		cc := caps.GetCacheCapabilities()
		if cc == nil {
			c.limitsErr = fmt.Errorf("%w: %s: the server offers no cache", ErrUnavailable, c.target)
			return
		}
		sha := len(cc.GetDigestFunctions()) == 0
		for _, f := range cc.GetDigestFunctions() {
			sha = sha || f == pb.DigestFunction_SHA256
		}
		if !sha {
			c.limitsErr = fmt.Errorf("%w: %s: the server does not take SHA-256 digests", ErrUnavailable, c.target)
			return
		}
		c.limits = casLimits{batchBytes: maxBatchBytes, maxBlob: cc.GetMaxCasBlobSizeBytes(),
			acUpdate: cc.GetActionCacheUpdateCapabilities().GetUpdateEnabled()}
		if b := cc.GetMaxBatchTotalSizeBytes(); b > 0 {
			// What a batch's digests and framing take comes off the server's bound.
			c.limits.batchBytes = min(c.limits.batchBytes, b-b/16)
		}
	})
	return c.limits, c.limitsErr
}

func (c *reapiCache) Fetch(ctx context.Context, key string, cas *store.CAS) (Meta, bool, error) {
	if !isDigest(key) {
		return Meta{}, false, nil
	}
	if c.setupErr != nil {
		return Meta{}, false, c.setupErr
	}
	hash, size := ActionKey(key)
	cctx, cancel := c.call(ctx)
	res, err := c.ac.GetActionResult(cctx, &pb.GetActionResultRequest{InstanceName: c.instance,
		ActionDigest: &pb.Digest{Hash: hash, SizeBytes: size}, InlineOutputFiles: []string{arMetaPath, arOutputsPath},
		InlineStdout: true})
	if err != nil {
		err = c.rpcErr(cctx, "GetActionResult", err, false)
		cancel()
		if errors.Is(err, errNotFound) {
			return Meta{}, false, nil
		}
		return Meta{}, false, err
	}
	cancel()
	ar, inlined, err := fromProto(res)
	if err != nil {
		return Meta{}, false, fmt.Errorf("%w: action result of %s: %v", ErrCorrupt, key[:12], err)
	}
	metaDigest, ok := ar.files[arMetaPath]
	if !ok || ar.exitCode != 0 {
		return Meta{}, false, nil // another client's action under this digest: not a vx entry
	}
	if metaDigest.size > maxMetaBytes {
		return Meta{}, false, fmt.Errorf("%w: entry document of %d bytes", ErrCorrupt, metaDigest.size)
	}
	metaData, ok, err := c.readSmall(ctx, metaDigest, inlined)
	if err != nil || !ok {
		return Meta{}, false, err
	}
	m, err := metaOf(ar, metaData)
	if err != nil {
		return Meta{}, false, err
	}
	blobs := []digest{{m.LogBlob, m.LogSize}}
	if !m.FilesInCAS {
		blobs = append(blobs, digest{m.OutputsBlob, m.OutputsSize})
	} else if err := m.checkFiles(); err != nil {
		return Meta{}, false, err
	}
	// What the server inlined (it may inline none of it, or part) is kept, checked against the
	// digest the entry document names, once the rest is read from the CAS.
	held := map[string][]byte{m.LogBlob: ar.stdoutRaw}
	if c := inlined[arOutputsPath]; c != nil && !m.FilesInCAS {
		held[m.OutputsBlob] = c
	}
	var rest, inline []digest
	for _, d := range blobs {
		if held[d.hash] != nil && d.size > 0 {
			inline = append(inline, d)
		} else {
			rest = append(rest, d)
		}
	}
	ok, err = c.download(ctx, cas, rest)
	if err != nil || !ok {
		return Meta{}, false, err
	}
	for _, d := range inline {
		if err := putInline(d, held[d.hash], cas); err != nil {
			return Meta{}, false, err
		}
	}
	return m, true, nil
}

// fromProto is the part of an ActionResult a vx entry uses, and the contents of the output files
// the server inlined. An output folder or link is not of a vx entry: the entry is a miss (its
// Meta check fails on it), never restored from them.
func fromProto(res *pb.ActionResult) (actionResult, map[string][]byte, error) {
	ar := actionResult{files: map[string]digest{}, exitCode: res.GetExitCode()}
	inlined := map[string][]byte{}
	for _, f := range res.GetOutputFiles() {
		d := f.GetDigest()
		if f.GetPath() == "" || d == nil || !isDigest(d.GetHash()) || d.GetSizeBytes() < 0 {
			return ar, nil, fmt.Errorf("output file %q without a digest", f.GetPath())
		}
		ar.files[f.GetPath()] = digest{d.GetHash(), d.GetSizeBytes()}
		if len(f.GetContents()) > 0 {
			inlined[f.GetPath()] = f.GetContents()
		}
	}
	if len(res.GetOutputDirectories()) > 0 || len(res.GetOutputSymlinks()) > 0 || len(res.GetOutputFileSymlinks()) > 0 {
		return ar, nil, errors.New("output folders or links: not a vx entry")
	}
	if d := res.GetStdoutDigest(); d != nil {
		if !isDigest(d.GetHash()) || d.GetSizeBytes() < 0 {
			return ar, nil, errors.New("bad stdout digest")
		}
		ar.stdout = &digest{d.GetHash(), d.GetSizeBytes()}
	}
	if raw := res.GetStdoutRaw(); len(raw) > 0 {
		// The log inlined: it must be what the digest beside it names, if the server gave one.
		sum := sha256.Sum256(raw)
		d := digest{hex.EncodeToString(sum[:]), int64(len(raw))}
		if ar.stdout != nil && *ar.stdout != d {
			return ar, nil, errors.New("inline stdout does not match its digest")
		}
		ar.stdout, ar.stdoutRaw = &d, raw
	}
	return ar, inlined, nil
}

// readSmall answers the content of a small blob (the Meta document): inlined by the server, or
// read in a batch; checked against its digest either way. ok is false when the server lacks it.
func (c *reapiCache) readSmall(ctx context.Context, d digest, inlined map[string][]byte) ([]byte, bool, error) {
	data, ok := inlined[arMetaPath]
	if !ok {
		got, err := c.batchRead(ctx, []digest{d})
		if err != nil {
			return nil, false, err
		}
		if data, ok = got[d.hash]; !ok {
			return nil, false, nil
		}
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != d.hash || int64(len(data)) != d.size {
		return nil, false, fmt.Errorf("%w: blob %s does not match its digest", ErrCorrupt, d.hash[:12])
	}
	return data, true, nil
}

func (c *reapiCache) Store(ctx context.Context, key string, m Meta, cas *store.CAS) error {
	if !isDigest(key) {
		return nil
	}
	if c.setupErr != nil {
		return c.setupErr
	}
	if limits, err := c.casLimits(ctx); err != nil {
		return err
	} else if !limits.acUpdate {
		return fmt.Errorf("%w: %s", ErrActionCacheReadOnly, c.target)
	}
	files, m, err := c.heldFiles(ctx, m)
	if err != nil {
		return err
	}
	metaData, err := json.Marshal(m)
	if err != nil {
		return err
	}
	metaDigest := digestOf(metaData)
	blobs := []blob{{d: digest{metaDigest.Hash, metaDigest.SizeBytes}, data: metaData}}
	for _, d := range []digest{{m.OutputsBlob, m.OutputsSize}, {m.LogBlob, m.LogSize}} {
		if d.hash != "" && d.size > 0 {
			blobs = append(blobs, blob{d: d})
		}
	}
	if err := c.upload(ctx, cas, blobs); err != nil {
		return err
	}
	res := &pb.ActionResult{OutputFiles: append([]*pb.OutputFile{{Path: arMetaPath, Digest: metaDigest}}, files...)}
	if m.OutputsBlob != "" {
		res.OutputFiles = append(res.OutputFiles, &pb.OutputFile{Path: arOutputsPath,
			Digest: &pb.Digest{Hash: m.OutputsBlob, SizeBytes: m.OutputsSize}})
	}
	if m.LogSize > 0 {
		res.StdoutDigest = &pb.Digest{Hash: m.LogBlob, SizeBytes: m.LogSize}
	}
	hash, size := ActionKey(key)
	cctx, cancel := c.call(ctx)
	defer cancel()
	_, err = c.ac.UpdateActionResult(cctx, &pb.UpdateActionResultRequest{InstanceName: c.instance,
		ActionDigest: &pb.Digest{Hash: hash, SizeBytes: size}, ActionResult: res})
	if err != nil {
		return c.rpcErr(cctx, "UpdateActionResult", err, true)
	}
	return nil
}

// ErrActionCacheReadOnly is a REAPI server whose capabilities say that clients may not write its
// Action Cache (only its workers do): vx's own keys cannot be kept there, and nothing is sent.
// It is the deployment's setting, not a failure: the session stops uploading without a warning.
var ErrActionCacheReadOnly = errors.New("the server lets only its workers write the Action Cache")

// Check asks the server for its capabilities: it answers, takes the credentials, and SHA-256.
func (c *reapiCache) Check(ctx context.Context) error {
	if c.setupErr != nil {
		return c.setupErr
	}
	_, err := c.casLimits(ctx)
	return err
}

// Close ends the connection and its goroutines.
func (c *reapiCache) Close() {
	if c.conn != nil {
		_ = c.conn.Close()
	}
}
