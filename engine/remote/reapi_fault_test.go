package remote_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"
	bspb "google.golang.org/genproto/googleapis/bytestream"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/remote"
	"github.com/vzn/vx/engine/store"
)

// faultREAPI is an in-process REAPI server made from remote-apis' generated stubs: a test double
// for the faults a real server is hard to make show (a dropped stream, a wrong digest, a stall),
// never the proof that the client works with a real one. It keeps blobs and action results in
// memory, advertises a small batch limit, and records the largest batch it was sent or asked.
type faultREAPI struct {
	pb.UnimplementedActionCacheServer
	pb.UnimplementedContentAddressableStorageServer
	pb.UnimplementedCapabilitiesServer
	bspb.UnimplementedByteStreamServer

	batchLimit int64
	// mode is the fault: "", "slow" (every call waits for the client to give up), "wrong-digest"
	// (blobs are answered with a byte changed), "drop" (a ByteStream read ends half way with
	// UNAVAILABLE).
	mode atomic.Value
	// workersOnlyAC makes the server say, as a deployment that lets only its workers write its
	// Action Cache does, that clients may not (update_enabled false) and refuse their writes;
	// updates counts the UpdateActionResult calls.
	workersOnlyAC atomic.Bool
	updates       atomic.Int64

	mu        sync.Mutex
	blobs     map[string][]byte
	results   map[string]*pb.ActionResult
	maxBatch  int64
	streamed  int
	addr      string
	serverErr chan error
}

// startFaultREAPI serves a faultREAPI on a loopback port until the test ends.
func startFaultREAPI(t *testing.T, batchLimit int64) *faultREAPI {
	t.Helper()
	f := &faultREAPI{batchLimit: batchLimit, blobs: map[string][]byte{}, results: map[string]*pb.ActionResult{},
		serverErr: make(chan error, 1)}
	f.mode.Store("")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.addr = l.Addr().String()
	srv := grpc.NewServer()
	pb.RegisterActionCacheServer(srv, f)
	pb.RegisterContentAddressableStorageServer(srv, f)
	pb.RegisterCapabilitiesServer(srv, f)
	bspb.RegisterByteStreamServer(srv, f)
	go func() { f.serverErr <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Stop()
		<-f.serverErr
	})
	return f
}

func (f *faultREAPI) url() string { return "grpc://" + f.addr }

// fault waits out a slow call; it answers the error the call ends with, if any.
func (f *faultREAPI) fault(ctx context.Context) error {
	if f.mode.Load() == "slow" {
		<-ctx.Done()
		return status.FromContextError(ctx.Err()).Err()
	}
	return nil
}

func (f *faultREAPI) served(data []byte) []byte {
	out := append([]byte(nil), data...)
	if f.mode.Load() == "wrong-digest" && len(out) > 0 {
		out[len(out)-1] ^= 0xff
	}
	return out
}

func (f *faultREAPI) batched(size int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.maxBatch = max(f.maxBatch, size)
	if size > f.batchLimit {
		return status.Errorf(codes.InvalidArgument, "batch of %d bytes over the limit %d", size, f.batchLimit)
	}
	return nil
}

func (f *faultREAPI) GetCapabilities(ctx context.Context, _ *pb.GetCapabilitiesRequest) (*pb.ServerCapabilities, error) {
	if err := f.fault(ctx); err != nil {
		return nil, err
	}
	return &pb.ServerCapabilities{CacheCapabilities: &pb.CacheCapabilities{
		DigestFunctions:               []pb.DigestFunction_Value{pb.DigestFunction_SHA256},
		ActionCacheUpdateCapabilities: &pb.ActionCacheUpdateCapabilities{UpdateEnabled: !f.workersOnlyAC.Load()},
		MaxBatchTotalSizeBytes:        f.batchLimit}}, nil
}

func (f *faultREAPI) GetActionResult(ctx context.Context, req *pb.GetActionResultRequest) (*pb.ActionResult, error) {
	if err := f.fault(ctx); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	res, ok := f.results[req.GetActionDigest().GetHash()]
	if !ok {
		return nil, status.Error(codes.NotFound, "no such action")
	}
	res = proto.Clone(res).(*pb.ActionResult)
	// What the client asks inlined is, as bazel-remote does, within a bound (here the batch
	// limit); the "wrong-inline" fault changes a byte of an inlined archive, and of nothing else.
	inlined := int64(0)
	for _, of := range res.OutputFiles {
		if size := of.GetDigest().GetSizeBytes(); slices.Contains(req.GetInlineOutputFiles(), of.GetPath()) && inlined+size <= f.batchLimit {
			inlined += size
			of.Contents = f.served(f.blobs[of.GetDigest().GetHash()])
			if f.mode.Load() == "wrong-inline" && of.GetPath() == "outputs.tar.zst" && len(of.Contents) > 0 {
				of.Contents[0] ^= 0xff
			}
		}
	}
	if d := res.GetStdoutDigest(); req.GetInlineStdout() && d != nil && inlined+d.GetSizeBytes() <= f.batchLimit {
		res.StdoutRaw = f.served(f.blobs[d.GetHash()])
	}
	return res, nil
}

func (f *faultREAPI) UpdateActionResult(ctx context.Context, req *pb.UpdateActionResultRequest) (*pb.ActionResult, error) {
	if err := f.fault(ctx); err != nil {
		return nil, err
	}
	f.updates.Add(1)
	if f.workersOnlyAC.Load() {
		return nil, status.Error(codes.PermissionDenied, "only workers write the Action Cache")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.results[req.GetActionDigest().GetHash()] = req.GetActionResult()
	return req.GetActionResult(), nil
}

func (f *faultREAPI) FindMissingBlobs(ctx context.Context, req *pb.FindMissingBlobsRequest) (*pb.FindMissingBlobsResponse, error) {
	if err := f.fault(ctx); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	res := &pb.FindMissingBlobsResponse{}
	for _, d := range req.GetBlobDigests() {
		if _, ok := f.blobs[d.GetHash()]; !ok {
			res.MissingBlobDigests = append(res.MissingBlobDigests, d)
		}
	}
	return res, nil
}

func (f *faultREAPI) BatchUpdateBlobs(ctx context.Context, req *pb.BatchUpdateBlobsRequest) (*pb.BatchUpdateBlobsResponse, error) {
	if err := f.fault(ctx); err != nil {
		return nil, err
	}
	var size int64
	for _, r := range req.GetRequests() {
		size += int64(len(r.GetData()))
	}
	if err := f.batched(size); err != nil {
		return nil, err
	}
	res := &pb.BatchUpdateBlobsResponse{}
	for _, r := range req.GetRequests() {
		f.put(r.GetData())
		res.Responses = append(res.Responses, &pb.BatchUpdateBlobsResponse_Response{Digest: r.GetDigest(), Status: status.New(codes.OK, "").Proto()})
	}
	return res, nil
}

func (f *faultREAPI) put(data []byte) {
	sum := sha256.Sum256(data)
	f.mu.Lock()
	f.blobs[hex.EncodeToString(sum[:])] = append([]byte(nil), data...)
	f.mu.Unlock()
}

func (f *faultREAPI) blob(hash string) ([]byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	data, ok := f.blobs[hash]
	return data, ok
}

func (f *faultREAPI) BatchReadBlobs(ctx context.Context, req *pb.BatchReadBlobsRequest) (*pb.BatchReadBlobsResponse, error) {
	if err := f.fault(ctx); err != nil {
		return nil, err
	}
	var size int64
	for _, d := range req.GetDigests() {
		size += d.GetSizeBytes()
	}
	if err := f.batched(size); err != nil {
		return nil, err
	}
	res := &pb.BatchReadBlobsResponse{}
	for _, d := range req.GetDigests() {
		data, ok := f.blob(d.GetHash())
		r := &pb.BatchReadBlobsResponse_Response{Digest: d, Data: f.served(data), Status: status.New(codes.OK, "").Proto()}
		if !ok {
			r.Data, r.Status = nil, status.New(codes.NotFound, "missing").Proto()
		}
		res.Responses = append(res.Responses, r)
	}
	return res, nil
}

// Read serves a blob in 16 KiB chunks; "drop" ends the stream after the first.
func (f *faultREAPI) Read(req *bspb.ReadRequest, stream bspb.ByteStream_ReadServer) error {
	if err := f.fault(stream.Context()); err != nil {
		return err
	}
	parts := strings.Split(req.GetResourceName(), "/")
	data, ok := f.blob(parts[len(parts)-2])
	if !ok {
		return status.Error(codes.NotFound, "missing")
	}
	f.mu.Lock()
	f.streamed++
	f.mu.Unlock()
	data = f.served(data)
	for off := 0; off < len(data); off += 16 << 10 {
		if err := stream.Send(&bspb.ReadResponse{Data: data[off:min(off+16<<10, len(data))]}); err != nil {
			return err
		}
		if f.mode.Load() == "drop" {
			return status.Error(codes.Unavailable, "connection dropped")
		}
	}
	return nil
}

func (f *faultREAPI) Write(stream bspb.ByteStream_WriteServer) error {
	if err := f.fault(stream.Context()); err != nil {
		return err
	}
	var data []byte
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		data = append(data, req.GetData()...)
		if req.GetFinishWrite() {
			break
		}
	}
	f.mu.Lock()
	f.streamed++
	f.mu.Unlock()
	f.put(data)
	return stream.SendAndClose(&bspb.WriteResponse{CommittedSize: int64(len(data))})
}

// TestREAPIFaults: against a server that stalls, drops a stream or answers a wrong digest, a
// fetch ends within its bounds as unavailable or rejected, and nothing unchecked lands in the
// local store; every batch stays under the limit the server advertised.
func TestREAPIFaults(t *testing.T) {
	const limit = 64 << 10
	f := startFaultREAPI(t, limit)
	c := reapiClient(t, &graph.RemoteCache{URL: f.url(), Timeout: 300 * time.Millisecond}, nil)
	ctx := context.Background()
	m, local := testEntry(t, 200<<10) // past the batch limit: ByteStream
	if err := c.Store(ctx, testKey, m, local); err != nil {
		t.Fatalf("store: %v", err)
	}
	if f.maxBatch > limit || f.streamed != 1 {
		t.Fatalf("largest batch %d bytes (limit %d), %d streamed; want the archive streamed", f.maxBatch, limit, f.streamed)
	}
	if got, ok, err := c.Fetch(ctx, testKey, store.NewCAS(t.TempDir())); !ok || err != nil || got.OutputsBlob != m.OutputsBlob {
		t.Fatalf("fetch without a fault: ok=%v err=%v", ok, err)
	}
	for _, tc := range []struct {
		mode string
		want error
	}{{"slow", remote.ErrUnavailable}, {"drop", remote.ErrUnavailable}, {"wrong-digest", remote.ErrCorrupt}} {
		t.Run(tc.mode, func(t *testing.T) {
			f.mode.Store(tc.mode)
			defer f.mode.Store("")
			other := store.NewCAS(t.TempDir())
			_, ok, err := c.Fetch(ctx, testKey, other)
			if ok || !errors.Is(err, tc.want) {
				t.Fatalf("want %v, got ok=%v err=%v", tc.want, ok, err)
			}
			for _, h := range []string{m.OutputsBlob, m.LogBlob} {
				if other.Has(h) {
					t.Fatalf("blob %s reached the local store", h[:12])
				}
			}
		})
	}
	if f.maxBatch > limit {
		t.Fatalf("a batch of %d bytes, over the advertised %d", f.maxBatch, limit)
	}
}

// TestREAPIInlineChecked: an archive the server inlined with a byte changed is refused as corrupt
// and kept nowhere (TestREAPIRoundTrip shows a real server's inlined archive and log taken).
func TestREAPIInlineChecked(t *testing.T) {
	f := startFaultREAPI(t, 1<<20)
	c := reapiClient(t, &graph.RemoteCache{URL: f.url()}, nil)
	ctx := context.Background()
	m, local := testEntry(t, 3000)
	if err := c.Store(ctx, testKey, m, local); err != nil {
		t.Fatalf("store: %v", err)
	}
	if _, ok, err := c.Fetch(ctx, testKey, store.NewCAS(t.TempDir())); !ok || err != nil {
		t.Fatalf("fetch without a fault: ok=%v err=%v", ok, err)
	}
	f.mode.Store("wrong-inline")
	defer f.mode.Store("")
	other := store.NewCAS(t.TempDir())
	if _, ok, err := c.Fetch(ctx, testKey, other); ok || !errors.Is(err, remote.ErrCorrupt) {
		t.Fatalf("an inlined archive changed: ok=%v err=%v, want corrupt", ok, err)
	}
	if other.Has(m.OutputsBlob) {
		t.Fatal("the changed archive reached the local store")
	}
}

// TestREAPIFaultRun: a run against a server that stalls warns once and runs every task here.
func TestREAPIFaultRun(t *testing.T) {
	f := startFaultREAPI(t, 1<<20)
	f.mode.Store("slow")
	r := vxRun(t, checkout(t, fmt.Sprintf(`remoteCache: { reapi: '%s', timeout: '300ms' },`, f.url()), ""), nil, "build", "test")
	mustPass(t, "slow server", r)
	if got := sources(r); got["run"] != 6 {
		t.Fatalf("want every task run, got %v\n%s", got, r.stderr)
	}
	if w := warnings(r); len(w) != 1 || !strings.Contains(w[0], "DeadlineExceeded") {
		t.Fatalf("want one deadline warning, got %q", w)
	}
}
