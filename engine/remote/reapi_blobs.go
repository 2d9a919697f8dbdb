package remote

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	pb "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"
	bspb "google.golang.org/genproto/googleapis/bytestream"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/vzn/vx/engine/store"
)

// blob is one blob to upload: its digest, and its content when the local blob store lacks it:
// data, or the file at path.
type blob struct {
	d    digest
	data []byte
	path string
}

// upload sends the blobs the server lacks (FindMissingBlobs): those under the batch bound in
// batches, larger ones through ByteStream.
func (c *reapiCache) upload(ctx context.Context, cas *store.CAS, blobs []blob) error {
	limits, err := c.casLimits(ctx)
	if err != nil {
		return err
	}
	missing, err := c.findMissing(ctx, blobs)
	if err != nil {
		return err
	}
	var batch []blob
	var batchSize int64
	for _, b := range blobs {
		if !missing[b.d.hash] {
			continue
		}
		if limits.maxBlob > 0 && b.d.size > limits.maxBlob {
			return fmt.Errorf("%s: blob %s of %d bytes is larger than the server takes (%d)", c.target, b.d.hash[:12], b.d.size, limits.maxBlob)
		}
		if b.d.size > limits.batchBytes {
			if err := c.write(ctx, cas, b); err != nil {
				return err
			}
			continue
		}
		if batchSize+b.d.size > limits.batchBytes {
			if err := c.batchUpdate(ctx, batch); err != nil {
				return err
			}
			batch, batchSize = nil, 0
		}
		if b.data == nil {
			if b.data, err = blobData(cas, b); err != nil {
				return err
			}
		}
		batch, batchSize = append(batch, b), batchSize+b.d.size
	}
	if len(batch) == 0 {
		return nil
	}
	return c.batchUpdate(ctx, batch)
}

// blobData reads a small blob to upload whole: from its file, checked against its digest (the
// file may have changed since it was hashed), else from the local store.
func blobData(cas *store.CAS, b blob) ([]byte, error) {
	if b.path == "" {
		return localBlob(cas, b.d)
	}
	data, err := readBounded(b.path, b.d.size)
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != b.d.hash || int64(len(data)) != b.d.size {
		return nil, fmt.Errorf("%s changed since it was hashed", b.path)
	}
	return data, nil
}

// readBounded reads a file of size bytes, at most one more.
func readBounded(path string, size int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, size+1))
}

// localBlob reads a small blob of the local store whole, refusing one whose size moved.
func localBlob(cas *store.CAS, d digest) ([]byte, error) {
	f, size, err := cas.Open(d.hash)
	if err != nil {
		return nil, fmt.Errorf("local blob %s: %w", d.hash[:12], err)
	}
	defer f.Close()
	if size != d.size {
		return nil, fmt.Errorf("local blob %s changed size", d.hash[:12])
	}
	return io.ReadAll(io.LimitReader(f, size))
}

// findMissing answers which of the blobs the server lacks.
func (c *reapiCache) findMissing(ctx context.Context, blobs []blob) (map[string]bool, error) {
	req := &pb.FindMissingBlobsRequest{InstanceName: c.instance}
	for _, b := range blobs {
		req.BlobDigests = append(req.BlobDigests, &pb.Digest{Hash: b.d.hash, SizeBytes: b.d.size})
	}
	cctx, cancel := c.call(ctx)
	defer cancel()
	res, err := c.cas.FindMissingBlobs(cctx, req)
	if err != nil {
		return nil, c.rpcErr(cctx, "FindMissingBlobs", err, true)
	}
	missing := map[string]bool{}
	for _, d := range res.GetMissingBlobDigests() {
		missing[d.GetHash()] = true
	}
	return missing, nil
}

// sizedCall is ctx with the client's headers, bounded for a transfer of size bytes as a watched
// transfer is: 2 × timeout + size ÷ 1 MiB/s.
func (c *reapiCache) sizedCall(ctx context.Context, size int64) (context.Context, *transferWatch) {
	ctx, w := watchTransfer(ctx, c.timeout)
	w.sized(size)
	return metadata.NewOutgoingContext(ctx, c.md), w
}

// batchUpdate sends blobs in one BatchUpdateBlobs; a blob the server refuses fails the upload.
func (c *reapiCache) batchUpdate(ctx context.Context, blobs []blob) error {
	req := &pb.BatchUpdateBlobsRequest{InstanceName: c.instance}
	var size int64
	for _, b := range blobs {
		req.Requests = append(req.Requests, &pb.BatchUpdateBlobsRequest_Request{
			Digest: &pb.Digest{Hash: b.d.hash, SizeBytes: b.d.size}, Data: b.data})
		size += b.d.size
	}
	cctx, w := c.sizedCall(ctx, size)
	defer w.stop()
	res, err := c.cas.BatchUpdateBlobs(cctx, req)
	if err != nil {
		return c.rpcErr(cctx, "BatchUpdateBlobs", err, true)
	}
	for _, r := range res.GetResponses() {
		if st := r.GetStatus(); st.GetCode() != int32(codes.OK) {
			return c.rpcErr(cctx, "BatchUpdateBlobs", grpcstatus.ErrorProto(st), true)
		}
	}
	return nil
}

// batchRead reads blobs in one BatchReadBlobs and answers the content of those the server holds,
// each checked against its digest: a blob that does not match, or one not asked for, refuses the
// whole answer.
func (c *reapiCache) batchRead(ctx context.Context, ds []digest) (map[string][]byte, error) {
	req := &pb.BatchReadBlobsRequest{InstanceName: c.instance}
	asked := map[string]int64{}
	var size int64
	for _, d := range ds {
		req.Digests = append(req.Digests, &pb.Digest{Hash: d.hash, SizeBytes: d.size})
		asked[d.hash] = d.size
		size += d.size
	}
	cctx, w := c.sizedCall(ctx, size)
	defer w.stop()
	res, err := c.cas.BatchReadBlobs(cctx, req)
	if err != nil {
		return nil, c.rpcErr(cctx, "BatchReadBlobs", err, false)
	}
	got := map[string][]byte{}
	for _, r := range res.GetResponses() {
		switch code := codes.Code(r.GetStatus().GetCode()); code {
		case codes.OK:
		case codes.NotFound:
			continue
		default:
			return nil, c.rpcErr(cctx, "BatchReadBlobs", grpcstatus.ErrorProto(r.GetStatus()), false)
		}
		hash := r.GetDigest().GetHash()
		want, ok := asked[hash]
		if !ok {
			return nil, fmt.Errorf("%w: %s answered a blob it was not asked for", ErrCorrupt, c.target)
		}
		sum := sha256.Sum256(r.GetData())
		if hex.EncodeToString(sum[:]) != hash || int64(len(r.GetData())) != want {
			return nil, fmt.Errorf("%w: blob %s does not match its digest", ErrCorrupt, hash[:12])
		}
		got[hash] = r.GetData()
	}
	return got, nil
}

// download brings the blobs named into the local blob store, each checked against its digest:
// small ones in batches, larger ones through ByteStream. ok is false when the server lacks one.
func (c *reapiCache) download(ctx context.Context, cas *store.CAS, ds []digest) (bool, error) {
	limits, err := c.casLimits(ctx)
	if err != nil {
		return false, err
	}
	var batch []digest
	var batchSize int64
	for _, d := range ds {
		switch {
		case d.hash == "":
			continue
		case d.size == 0:
			if d.hash != emptyDigest {
				return false, fmt.Errorf("%w: empty blob named %s", ErrCorrupt, d.hash[:12])
			}
			if _, err := cas.Put(nil); err != nil {
				return false, err
			}
			continue
		case cas.Has(d.hash):
			continue // checked again when the runner reads it
		case d.size > limits.batchBytes:
			if ok, err := c.readStream(ctx, cas, d); err != nil || !ok {
				return false, err
			}
			continue
		}
		if batchSize+d.size > limits.batchBytes {
			if ok, err := c.readBatch(ctx, cas, batch); err != nil || !ok {
				return false, err
			}
			batch, batchSize = nil, 0
		}
		batch, batchSize = append(batch, d), batchSize+d.size
	}
	if len(batch) == 0 {
		return true, nil
	}
	return c.readBatch(ctx, cas, batch)
}

// readBatch reads ds in one batch into the local blob store; ok is false when one is missing.
func (c *reapiCache) readBatch(ctx context.Context, cas *store.CAS, ds []digest) (bool, error) {
	got, err := c.batchRead(ctx, ds)
	if err != nil {
		return false, err
	}
	for _, d := range ds {
		data, ok := got[d.hash]
		if !ok {
			return false, nil
		}
		if err := cas.PutStream(d.hash, d.size, bytes.NewReader(data)); err != nil {
			return false, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
	}
	return true, nil
}

// resource is the ByteStream name of a blob to read.
func (c *reapiCache) resource(d digest) string {
	name := "blobs/" + d.hash + "/" + strconv.FormatInt(d.size, 10)
	if c.instance != "" {
		name = c.instance + "/" + name
	}
	return name
}

// uploadResource is the ByteStream name of a blob to write, under a fresh upload id.
func (c *reapiCache) uploadResource(d digest) string {
	var id [16]byte
	_, _ = rand.Read(id[:])
	id[6], id[8] = id[6]&0x0f|0x40, id[8]&0x3f|0x80
	h := hex.EncodeToString(id[:])
	name := "uploads/" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:] +
		"/blobs/" + d.hash + "/" + strconv.FormatInt(d.size, 10)
	if c.instance != "" {
		name = c.instance + "/" + name
	}
	return name
}

// readStream streams one blob through ByteStream Read into the local blob store, checked as it
// arrives and bounded by a watched transfer; ok is false when the server lacks it.
func (c *reapiCache) readStream(ctx context.Context, cas *store.CAS, d digest) (bool, error) {
	cctx, w := c.sizedCall(ctx, d.size)
	defer w.stop()
	stream, err := c.bs.Read(cctx, &bspb.ReadRequest{ResourceName: c.resource(d)})
	if err == nil {
		err = cas.PutStream(d.hash, d.size, &streamReader{recv: stream.Recv, w: w})
	}
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, store.ErrBlobMismatch):
		return false, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	err = c.rpcErr(cctx, "ByteStream.Read", err, false)
	if errors.Is(err, errNotFound) {
		return false, nil
	}
	return false, err
}

// streamReader reads a ByteStream Read's chunks as one stream; each chunk restarts the stall timer.
type streamReader struct {
	recv func() (*bspb.ReadResponse, error)
	w    *transferWatch
	buf  []byte
}

func (r *streamReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		msg, err := r.recv()
		if err != nil {
			return 0, err
		}
		r.w.moved()
		r.buf = msg.GetData()
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// write streams one blob through ByteStream Write in chunks, bounded by a watched transfer; the
// server must commit all of it (or hold it already).
func (c *reapiCache) write(ctx context.Context, cas *store.CAS, b blob) error {
	var src io.Reader = bytes.NewReader(b.data)
	switch {
	case b.data == nil && b.path != "":
		// The server checks what it commits against the digest: a file changed since it was
		// hashed is refused there.
		f, err := os.Open(b.path)
		if err != nil {
			return err
		}
		defer f.Close()
		src = f
	case b.data == nil:
		f, size, err := cas.Open(b.d.hash)
		if err != nil {
			return fmt.Errorf("local blob %s: %w", b.d.hash[:12], err)
		}
		defer f.Close()
		if size != b.d.size {
			return fmt.Errorf("local blob %s changed size", b.d.hash[:12])
		}
		src = f
	}
	cctx, w := c.sizedCall(ctx, b.d.size)
	defer w.stop()
	stream, err := c.bs.Write(cctx)
	if err != nil {
		return c.rpcErr(cctx, "ByteStream.Write", err, true)
	}
	name, buf := c.uploadResource(b.d), make([]byte, chunkBytes)
	var off int64
	for off < b.d.size {
		n, err := io.ReadFull(src, buf[:min(int64(len(buf)), b.d.size-off)])
		if err != nil {
			return fmt.Errorf("local blob %s: %w", b.d.hash[:12], err)
		}
		req := &bspb.WriteRequest{WriteOffset: off, Data: buf[:n], FinishWrite: off+int64(n) == b.d.size}
		if off == 0 {
			req.ResourceName = name
		}
		if err := stream.Send(req); err != nil {
			break // the server ended the stream: its answer says why, or that it holds the blob
		}
		w.moved()
		off += int64(n)
	}
	res, err := stream.CloseAndRecv()
	if err != nil {
		return c.rpcErr(cctx, "ByteStream.Write", err, true)
	}
	if res.GetCommittedSize() != b.d.size && res.GetCommittedSize() != -1 {
		return fmt.Errorf("%w: ByteStream.Write %s: %d of %d bytes committed", ErrUnavailable, c.target, res.GetCommittedSize(), b.d.size)
	}
	return nil
}
